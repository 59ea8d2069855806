#include "trace/Trace.h"

#include "common/FileIdentity.h"
#include "protocol/Utf16Repair.h"

#include "trace/Otlp.h"
#include "trace/TraceImport.h"

#include <QDateTime>
#include <QFileInfo>

#include <iterator>

namespace mapi {

// ---- writer ----------------------------------------------------------------------------

TraceWriter::TraceWriter(QObject *parent)
    : QObject(parent)
{
    m_flushTimer.setInterval(kFlushIntervalMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &TraceWriter::flush);
}

TraceWriter::~TraceWriter()
{
    close();
}

QString TraceWriter::partPath(const QString &path, int part)
{
    if (part <= 0)
        return path;
    const qsizetype slash = std::max(path.lastIndexOf(QLatin1Char('/')), path.lastIndexOf(QLatin1Char('\\')));
    QString name = path.mid(slash + 1);
    const QString dir = path.left(slash + 1);
    QString compressed;
    for (const char *suffix : {".gz", ".gzip", ".zst", ".zstd"}) {
        const QLatin1String s(suffix);
        if (name.endsWith(s, Qt::CaseInsensitive) && name.size() > s.size()) {
            compressed = name.right(s.size());
            name.chop(s.size());
            break;
        }
    }
    const qsizetype dot = name.lastIndexOf(QLatin1Char('.'));
    const QString number = QStringLiteral(".%1").arg(part);
    if (dot > 0)
        return dir + name.left(dot) + number + name.mid(dot) + compressed;
    return dir + name + number + compressed;
}

bool TraceWriter::openPart(int part, QString *error)
{
    const QString path = partPath(m_path, part);
    QString why;
    // A recording is read while it grows: written in place, and never over an existing file.
    if (!m_out.open(path, compressionFromPath(m_path), &why, m_options.compressionLevel, CompressingWriter::Mode::CreateNew)) {
        if (error)
            *error = why;
        return false;
    }
    Json extra = m_headerExtra.is_object() ? m_headerExtra : Json::object();
    if (part > 0)
        extra["part"] = part;
    if (!m_server.is_null())
        extra["server"] = m_server;
    m_out.write(encodeHeaderLine(m_url, m_startedAt, extra));
    m_out.flush();
    m_files << path;
    m_part = part;
    m_partFirstTimeMs = -1;
    return true;
}

bool TraceWriter::open(const QString &path, const QString &url, QString *error)
{
    close();
    m_path = path;
    m_url = url;
    m_files.clear();
    m_error.clear();
    m_startedAt = QDateTime::currentMSecsSinceEpoch();
    if (!openPart(0, error))
        return false;
    m_flushTimer.start();
    m_sinceFlush.start();
    return true;
}

void TraceWriter::setServerInfo(const QString &name, const QString &version)
{
    m_server = {{"name", name.toStdString()}, {"version", version.toStdString()}};
}

void TraceWriter::fail(const QString &error)
{
    m_error = error;
    m_flushTimer.stop();
    m_out.close();
    Q_EMIT writeFailed(error);
}

void TraceWriter::write(const TraceRecord &record)
{
    if (!m_out.isOpen())
        return;
    if (m_partFirstTimeMs >= 0) {
        const bool full = m_options.maxBytes > 0 && m_out.bytesOnDisk() >= m_options.maxBytes;
        const bool old = m_options.maxSeconds > 0 && record.timeMs - m_partFirstTimeMs >= m_options.maxSeconds * 1000;
        if (full || old) {
            m_out.close();
            QString error;
            if (!openPart(m_part + 1, &error)) {
                fail(error);
                return;
            }
            Q_EMIT rotated(m_files.last());
        }
    }
    if (!m_out.write(encodeRecordLine(record))) {
        fail(m_out.errorString());
        return;
    }
    if (m_partFirstTimeMs < 0)
        m_partFirstTimeMs = record.timeMs;
    ++m_records;
    if (m_sinceFlush.hasExpired(kFlushIntervalMs))
        flush();
}

void TraceWriter::flush()
{
    m_sinceFlush.start();
    if (m_out.isOpen() && !m_out.flush())
        fail(m_out.errorString());
}

void TraceWriter::close()
{
    m_flushTimer.stop();
    if (m_out.isOpen() && !m_out.close())
        m_error = m_out.errorString();
}

// ---- reader ----------------------------------------------------------------------------

bool TraceFileReader::withinLimits(const QByteArray &text) const
{
    return text.size() <= m_limits.maxFrameBytes
        && FrameCodec::nestingDepth(text, m_limits.maxNestingDepth) <= m_limits.maxNestingDepth;
}

struct TraceFileReader::Impl
{
    // Otlp: OTLP/JSON requests, one per line; OtlpWhole: one request over many lines, read at open().
    enum class Mode { Trace, SeedLines, SeedArray, Otlp, OtlpWhole };
    struct EarlyLine
    {
        QByteArray text;
        qint64 number = 0;
        qint64 offset = 0;
        bool tooLong = false;
    };

    QString path;
    DecompressingReader in;
    std::unique_ptr<LineReader> lines;
    RecordLineParser parser;
    Mode mode = Mode::Trace;
    SeedImporter importer;
    OtlpImporter otlp;
    JsonArraySplitter splitter;
    std::deque<TraceRecord> pending;
    std::vector<EarlyLine> early; // lines read while detecting the format, replayed first
    size_t earlyPos = 0;
    bool finished = false;
    std::vector<TraceRecord> converted;
    std::vector<std::pair<QByteArray, qint64>> elements;

    // The next line: the early ones first, then the file's.
    // `offset`: the line's first byte in the file's decompressed content.
    bool nextLine(const char *&data, qsizetype &size, qsizetype &capacity, qint64 &number, qint64 &offset, bool &tooLong)
    {
        if (earlyPos < early.size()) {
            const EarlyLine &l = early[earlyPos++];
            data = l.text.constData();
            size = l.text.size();
            capacity = size; // no padding guarantee: the parser copies
            number = l.number;
            offset = l.offset;
            tooLong = l.tooLong;
            return true;
        }
        if (!lines->next(data, size))
            return false;
        capacity = size + LineReader::kPadding;
        number = lines->lineNumber();
        offset = lines->lineOffset();
        tooLong = lines->lineTooLong();
        return true;
    }
};

static QByteArray trimmedView(const char *data, qsizetype size)
{
    return QByteArray::fromRawData(data, size).trimmed();
}

TraceFileReader::TraceFileReader()
    : d(std::make_unique<Impl>())
{
}

TraceFileReader::~TraceFileReader() = default;

qint64 TraceFileReader::bytesRead() const
{
    return d->in.compressedBytesRead();
}

qint64 TraceFileReader::bytesTotal() const
{
    return d->in.fileSize();
}

bool TraceFileReader::open(const QString &path, QString *error)
{
    d = std::make_unique<Impl>();
    m_stats = TraceReadStats();
    d->path = path;
    if (!d->in.open(path, error))
        return false;
    if (m_contentIndex && m_contentIndex->open(path, nullptr))
        d->in.setContentIndex(m_contentIndex);
    m_stats.compression = compressionName(d->in.compression());
    m_stats.bytesTotal = d->in.fileSize();
    d->lines = std::make_unique<LineReader>(d->in);
    d->parser.setFramesCheckedLater(m_framesCheckedLater);
    d->importer = SeedImporter(QFileInfo(path).fileName());
    d->otlp = OtlpImporter(QFileInfo(path).fileName());

    // Detect the format from the first JSON object (or a leading '[').
    constexpr int kMaxProbeLines = 64;
    int probed = 0;
    bool decided = false;
    int beyondLimits = 0; // probed lines longer or deeper than the limits
    // The lines read while probing are kept to be read again once the format is known; past this
    // many bytes, a line beyond the limits is kept as a bad line (its number, not its text), so
    // that 64 giant lines ahead of the first good one cost at most this much memory (issue 16).
    constexpr qsizetype kMaxEarlyBytes = 64 << 20;
    qsizetype earlyBytes = 0;
    const char *data = nullptr;
    qsizetype size = 0;
    while (!decided && probed < kMaxProbeLines && d->lines->next(data, size)) {
        const QByteArray line = trimmedView(data, size);
        const bool inLimits = line.isEmpty() || line.startsWith('[') || withinLimits(line);
        if (inLimits || earlyBytes + size <= kMaxEarlyBytes) {
            d->early.push_back({QByteArray(data, size), d->lines->lineNumber(), d->lines->lineOffset(), d->lines->lineTooLong()});
            earlyBytes += size;
        } else {
            d->early.push_back({QByteArray(), d->lines->lineNumber(), d->lines->lineOffset(), true});
        }
        if (line.isEmpty())
            continue;
        ++probed;
        if (line.startsWith('[')) {
            d->mode = Impl::Mode::SeedArray;
            decided = true;
            break;
        }
        if (line == "{" && probed == 1)
            return openWholeObject(error);
        if (!inLimits) {
            ++beyondLimits; // not a line to judge the format by (and not one to parse)
            continue;
        }
        const Json object = Json::parse(line.constBegin(), line.constEnd(), nullptr, false);
        if (object.is_discarded() || !object.is_object())
            continue;
        if (object.contains("format") || (object.contains("dir") && (object.contains("t") || object.contains("raw")))) {
            d->mode = Impl::Mode::Trace;
        } else if (isOtlpRequest(object)) {
            d->mode = Impl::Mode::Otlp;
        } else if (detectImportFormat(object) != ImportFormat::Unknown) {
            d->mode = Impl::Mode::SeedLines;
        } else {
            QStringList keys;
            for (auto it = object.begin(); it != object.end() && keys.size() < 8; ++it)
                keys << QString::fromStdString(it.key());
            if (error)
                *error = unknownFormatError(path, QStringLiteral("line %1 is an object with keys %2")
                                                      .arg(d->lines->lineNumber())
                                                      .arg(keys.join(QStringLiteral(", "))));
            return false;
        }
        decided = true;
    }
    if (!decided && probed > 0) {
        if (error)
            *error = unknownFormatError(path, QStringLiteral("no JSON object in its first %1 non-empty lines%2").arg(probed)
                                                  .arg(beyondLimits == 0 ? QString()
                                                       : QStringLiteral(" (%1 of them longer than %2 bytes or nested deeper than %3 levels)")
                                                             .arg(beyondLimits).arg(m_limits.maxFrameBytes).arg(m_limits.maxNestingDepth)));
        return false;
    }
    return true;
}

// A file whose first line is a lone "{": one JSON object over many lines, which only an OTLP
// request is among the formats read (a pretty-printed export). Read whole, up to kMaxWholeBytes.
bool TraceFileReader::openWholeObject(QString *error)
{
    // A parsed JSON tree takes several times its text: 256 MiB of text stays within a few GB.
    constexpr qsizetype kMaxWholeBytes = 256 << 20;
    QByteArray text;
    for (const Impl::EarlyLine &l : d->early)
        text += l.text + '\n';
    d->early.clear();
    const char *data = nullptr;
    qsizetype size = 0;
    while (d->lines->next(data, size)) {
        if (text.size() + size > kMaxWholeBytes) {
            if (error)
                *error = unknownFormatError(d->path, QStringLiteral("one JSON object over many lines, larger than %1 MiB")
                                                         .arg(kMaxWholeBytes >> 20));
            return false;
        }
        text.append(data, size).append('\n');
    }
    if (FrameCodec::nestingDepth(text, m_limits.maxNestingDepth) > m_limits.maxNestingDepth) {
        if (error)
            *error = unknownFormatError(d->path, QStringLiteral("one JSON object nested deeper than %1 levels").arg(m_limits.maxNestingDepth));
        return false;
    }
    const Json object = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
    if (object.is_discarded() || !isOtlpRequest(object)) {
        if (error)
            *error = unknownFormatError(d->path, object.is_discarded() ? QStringLiteral("not valid JSON")
                                                                       : QStringLiteral("one JSON object over many lines, not an OTLP trace request"));
        return false;
    }
    d->otlp.add(object);
    d->mode = Impl::Mode::OtlpWhole;
    return true;
}

bool TraceFileReader::next(TraceRecord &record)
{
    Impl &s = *d;
    if (!s.lines)
        return false;
    for (;;) {
        if (!s.pending.empty()) {
            record = std::move(s.pending.front());
            s.pending.pop_front();
            break;
        }
        if (s.finished) {
            if ((s.mode == Impl::Mode::Otlp || s.mode == Impl::Mode::OtlpWhole)) {
                if (s.otlp.next(record))
                    break;
                if (m_stats.streamError.isEmpty())
                    m_stats.streamError = s.otlp.error(); // its events that could not be kept
            }
            return false;
        }
        const char *data = nullptr;
        qsizetype size = 0;
        qsizetype capacity = 0;
        qint64 number = 0;
        qint64 offset = 0;
        bool tooLong = false;
        if (!s.nextLine(data, size, capacity, number, offset, tooLong)) {
            s.finished = true;
            if (s.mode == Impl::Mode::SeedArray && s.splitter.pending())
                m_stats.addBadLine(m_stats.lines); // the array's last element was cut off
            m_stats.streamError = s.in.errorString();
            m_stats.bytesRead = s.in.compressedBytesRead();
            if (s.mode == Impl::Mode::Otlp || s.mode == Impl::Mode::OtlpWhole) {
                s.otlp.finish(); // its records come from next(), below
                if (m_stats.streamError.isEmpty()) // its temporary file could not be made or written
                    m_stats.streamError = s.otlp.error();
                m_stats.format = QStringLiteral("otlp");
                m_stats.otlpSpansDropped = s.otlp.droppedSpans();
            } else if (m_stats.format.isEmpty() && s.mode != Impl::Mode::Trace) {
                m_stats.format = importFormatName(s.importer.firstFormat());
            }
            continue;
        }
        m_stats.lines = number;
        if (tooLong) {
            m_stats.addBadLine(number);
            continue;
        }
        if (s.mode == Impl::Mode::Trace) {
            const RecordLineParser::Result result = s.parser.parse(data, size, capacity, record);
            if (result == RecordLineParser::Result::Record) {
                record.line = number;
                if (record.contentOffset >= 0)
                    record.contentOffset += offset;
                if (m_stats.format.isEmpty())
                    m_stats.format = QStringLiteral("capture");
                break;
            }
            if (result == RecordLineParser::Result::Header) {
                m_stats.header = s.parser.header();
                if (m_stats.format.isEmpty())
                    m_stats.format = jsonString(m_stats.header, "format");
            } else if (result == RecordLineParser::Result::Bad) {
                m_stats.addBadLine(number);
            }
            continue;
        }
        if (s.mode == Impl::Mode::Otlp) {
            if (m_cancel && m_cancel->load(std::memory_order_relaxed)) {
                s.finished = true; // no records: the caller stops
                return false;
            }
            const QByteArray line = trimmedView(data, size);
            if (line.isEmpty())
                continue;
            if (!withinLimits(line) || !s.otlp.add(line))
                m_stats.addBadLine(number);
            continue;
        }
        if (s.mode == Impl::Mode::OtlpWhole)
            continue; // read at open()
        // Seed-format logs.
        s.elements.clear();
        if (s.mode == Impl::Mode::SeedArray) {
            s.splitter.feed(data, size, number, s.elements);
        } else {
            const QByteArray line = trimmedView(data, size);
            if (line.isEmpty())
                continue;
            s.elements.emplace_back(QByteArray(line.constData(), line.size()), number);
        }
        for (const auto &[text, line] : s.elements) {
            if (!withinLimits(text)) {
                m_stats.addBadLine(line);
                continue;
            }
            Json object = Json::parse(text.constBegin(), text.constEnd(), nullptr, false);
            if (object.is_discarded()) { // a lone UTF-16 surrogate: read with U+FFFD (protocol/Utf16Repair.h)
                QByteArray repaired = text;
                if (repairLoneSurrogates(repaired) > 0)
                    object = Json::parse(repaired.constBegin(), repaired.constEnd(), nullptr, false);
            }
            s.converted.clear();
            if (object.is_discarded() || !s.importer.convert(object, s.converted)) {
                m_stats.addBadLine(line);
                continue;
            }
            for (TraceRecord &r : s.converted)
                s.pending.push_back(std::move(r));
        }
        if (m_stats.format.isEmpty() && s.importer.firstFormat() != ImportFormat::Unknown)
            m_stats.format = importFormatName(s.importer.firstFormat());
    }
    if (m_stats.records == 0)
        m_stats.firstTimeMs = record.timeMs;
    m_stats.lastTimeMs = m_stats.records == 0 ? record.timeMs : std::max(m_stats.lastTimeMs, record.timeMs);
    ++m_stats.records;
    ++m_stats.recordsByDir[size_t(recordDir(record.dir))];
    m_stats.bytesRead = s.in.compressedBytesRead();
    return true;
}

bool readTrace(const QString &path, const std::function<bool(const TraceRecord &)> &sink, TraceReadStats &stats,
               QString *error, const TraceReadOptions &options)
{
    TraceFileReader reader;
    if (!reader.open(path, error)) {
        stats = reader.stats();
        return false;
    }
    TraceRecord record;
    qint64 reported = 0;
    while (reader.next(record)) {
        if (!sink(record))
            break;
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            stats = reader.stats();
            stats.cancelled = true;
            return true;
        }
        if (options.progress && reader.bytesRead() - reported >= (1 << 20)) {
            reported = reader.bytesRead();
            options.progress(reported, reader.bytesTotal());
        }
    }
    stats = reader.stats();
    if (options.progress)
        options.progress(reader.bytesRead(), reader.bytesTotal());
    return true;
}

// ---- decoding and replay -------------------------------------------------------------------

RecordDecoder::RecordDecoder(CodecLimits limits, std::shared_ptr<const JsonParser> parser)
    : m_limits(limits)
    , m_parser(std::move(parser))
{
}

void RecordDecoder::reset()
{
    m_pipelines.clear();
    m_owned.clear();
    m_lastTimeMs = 0;
    m_damagedLines.clear();
}

void RecordDecoder::setKeepPayloadText(bool keep)
{
    m_keepPayloadText = keep;
    for (const auto &pipeline : m_owned)
        pipeline->setKeepPayloadText(keep);
}

int RecordDecoder::decode(const TraceRecord &r, ModelInputs &out)
{
    ProtocolPipeline *pipeline = m_pipelines.value(r.connection);
    if (!pipeline) {
        m_owned.push_back(std::make_unique<ProtocolPipeline>(m_limits, m_parser));
        pipeline = m_owned.back().get();
        pipeline->setKeepPayloadText(m_keepPayloadText);
        m_pipelines.insert(r.connection, pipeline);
    }
    m_lastTimeMs = std::max(m_lastTimeMs, r.timeMs);
    const size_t before = out.size();
    auto append = [&out](ModelInputs &&inputs) { std::move(inputs.begin(), inputs.end(), std::back_inserter(out)); };
    switch (recordDir(r.dir)) {
    case RecordDir::Recv:
        out = (r.binary ? pipeline->binaryFrameReceived(r.raw, r.timeMs, std::move(out))
                        : pipeline->frameReceived(r.raw, r.timeMs, std::move(out)))
                  .inputs;
        if (r.frameUnchecked && size_t(out.size()) == before + 1) {
            const auto *problem = std::get_if<ProblemInput>(&out.back());
            if (problem && problem->problem.kind == ProblemKind::InvalidJson) {
                out.pop_back();
                m_damagedLines.push_back(r.line);
            }
        }
        break;
    case RecordDir::Send:
        if (!pipeline->frameSent(r.raw, r.timeMs) && r.frameUnchecked)
            m_damagedLines.push_back(r.line);
        break;
    case RecordDir::Open:
        append(pipeline->connectionOpened(QString::fromUtf8(r.raw), r.timeMs));
        break;
    case RecordDir::Close:
        append(pipeline->connectionClosed(QString::fromUtf8(r.raw), r.timeMs));
        break;
    case RecordDir::Action: {
        ActionUpdate update = actionUpdateFromJson(r.extra);
        update.timeMs = r.timeMs;
        out.push_back(ModelInput(std::move(update)));
        break;
    }
    case RecordDir::Skip: {
        // An incident bundle's event numbers left out on purpose (trace/IncidentBundle.h).
        const Json skip = Json::parse(r.raw.constData(), r.raw.constData() + r.raw.size(), nullptr, false);
        const QString subscription = jsonString(skip, "subscriptionId");
        const qint64 upTo = jsonInt(skip, "upToSequence", -1);
        if (!subscription.isEmpty() && upTo >= 0)
            pipeline->skipSequence(subscription, upTo);
        break;
    }
    case RecordDir::Other:
        break;
    }
    return int(out.size() - before);
}

TraceSlice writeTraceSlice(const QString &inPath, const QString &outPath, std::optional<qint64> fromMs,
                           std::optional<qint64> toMs)
{
    TraceSlice result;
    auto fail = [&result](TraceSlice::Failure failure, const QString &error) {
        result.failure = failure;
        result.error = error;
        return result;
    };
    if (const QString same = outputOverwritesInput(outPath, {inPath}); !same.isEmpty())
        return fail(TraceSlice::Failure::OutputIsInput, same);
    TraceFileReader reader;
    QString error;
    if (!reader.open(inPath, &error))
        return fail(TraceSlice::Failure::InputUnreadable, error);
    CompressingWriter out; // Replace: put in place by close() only once whole
    if (!out.open(outPath, compressionFromPath(outPath), &error))
        return fail(TraceSlice::Failure::OutputUnwritable, error);
    const QString inName = QFileInfo(inPath).fileName();
    auto writeHeader = [&](qint64 firstTimeMs) {
        const TraceReadStats &st = reader.stats();
        Json extra = {{"convertedFrom", inName.toStdString()}, {"sourceFormat", st.format.toStdString()}};
        QString url = QStringLiteral("file:%1").arg(inName);
        qint64 started = firstTimeMs;
        if (st.header.is_object()) {
            url = jsonString(st.header, "url");
            started = jsonInt(st.header, "startedAt", started);
            if (const Json *server = jsonChild(st.header, "server"))
                extra["server"] = *server;
        }
        return out.write(encodeHeaderLine(url, started, extra));
    };
    TraceRecord record;
    bool headerWritten = false;
    while (reader.next(record)) {
        if (!headerWritten) {
            if (!writeHeader(record.timeMs))
                return fail(TraceSlice::Failure::OutputUnwritable, out.errorString());
            headerWritten = true;
        }
        if (toMs && record.timeMs > *toMs)
            break;
        if (fromMs && record.timeMs < *fromMs) {
            const RecordDir dir = recordDir(record.dir);
            if (dir != RecordDir::Send && dir != RecordDir::Open && dir != RecordDir::Close)
                continue;
        }
        if (!out.write(encodeRecordLine(record)))
            return fail(TraceSlice::Failure::OutputUnwritable, out.errorString());
        ++result.written;
    }
    if (!headerWritten && !writeHeader(0))
        return fail(TraceSlice::Failure::OutputUnwritable, out.errorString());
    if (!out.close())
        return fail(TraceSlice::Failure::OutputUnwritable, out.errorString());
    result.stats = reader.stats();
    return result;
}

} // namespace mapi
