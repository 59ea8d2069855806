#include "trace/IncidentBundle.h"
#include "common/FileIdentity.h"

#include "map/Dialect.h"
#include "protocol/FastHash.h"
#include "trace/CompressedFile.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <map>
#include <utility>

namespace mapi {

namespace {

const QString kReplacement = QStringLiteral("REDACTED");
constexpr int kMaxJsonInStringDepth = 4; // as the secret rules (common/Redaction.h)
// JSON nested deeper is not parsed (nlohmann's dump and destructor recurse): as the live codec's
// default limit (CodecLimits::maxNestingDepth). Such a frame cannot be searched: with any rule
// set it is left out, like a binary frame.
constexpr int kMaxParsedDepth = 128;

bool tooDeep(const QByteArray &text) { return FrameCodec::nestingDepth(text, kMaxParsedDepth) > kMaxParsedDepth; }

std::string toStd(const QString &text) { return text.toStdString(); }

bool isRedacted(const std::string &text) { return text.rfind("REDACTED", 0) == 0; }

} // namespace

qint64 RedactionCounts::total() const
{
    qint64 sum = 0;
    for (qint64 n : perKeyName)
        sum += n;
    for (qint64 n : perPattern)
        sum += n;
    return sum;
}

// ---- redaction ------------------------------------------------------------------------------

ErrorOr<BundleRedactor> BundleRedactor::make(const QStringList &keyNames, const QStringList &patterns)
{
    BundleRedactor r;
    for (const QString &name : keyNames) {
        const QString key = name.trimmed().toLower();
        if (!key.isEmpty() && !r.m_keyNames.contains(key))
            r.m_keyNames.append(key);
    }
    if (r.m_keyNames.size() > kMaxBundleKeyNames)
        return Failure{QStringLiteral("At most %1 key names can be redacted").arg(kMaxBundleKeyNames)};
    for (int i = 0; i < patterns.size(); ++i) {
        const QString &text = patterns[i];
        if (text.isEmpty())
            continue;
        // Named by number: a pattern may spell the very secret it removes, and errors are printed.
        QRegularExpression re(text, QRegularExpression::UseUnicodePropertiesOption);
        if (!re.isValid())
            return Failure{QStringLiteral("Pattern %1 is not a valid regular expression: %2 (at character %3)")
                               .arg(i + 1)
                               .arg(re.errorString())
                               .arg(re.patternErrorOffset())};
        // A pattern that matches the empty string would "replace" between every two characters.
        if (re.match(QString()).hasMatch())
            return Failure{QStringLiteral("Pattern %1 matches empty text: it would change every text").arg(i + 1)};
        re.optimize();
        r.m_patterns.push_back(std::move(re));
        r.m_patternNumbers.push_back(i + 1);
    }
    if (int(r.m_patterns.size()) > kMaxBundlePatterns)
        return Failure{QStringLiteral("At most %1 patterns can be redacted").arg(kMaxBundlePatterns)};
    r.resetCounts();
    return r;
}

void BundleRedactor::resetCounts()
{
    m_counts = RedactionCounts();
    m_counts.perKeyName.assign(size_t(m_keyNames.size()), 0);
    m_counts.perPattern.assign(m_patterns.size(), 0);
}

void BundleRedactor::startPseudonyms() { m_pseudonyms = std::make_shared<PseudonymTable>(); }

QString BundleRedactor::pseudonym(const QString &text)
{
    const quint64 key = fastHash(QStringView(text));
    auto it = m_pseudonyms->constFind(key);
    if (it == m_pseudonyms->constEnd()) {
        if (m_pseudonyms->size() >= kMaxPseudonyms)
            return kReplacement;
        it = m_pseudonyms->insert(key, int(m_pseudonyms->size()) + 1);
    }
    return kReplacement + QLatin1Char('-') + QString::number(it.value());
}

bool BundleRedactor::redactPatterns(QString &text)
{
    // What a rule already replaced is not matched again (a pattern such as \d+ would otherwise
    // eat a pseudonym's number): the spans of "REDACTED" and "REDACTED-<n>" are kept.
    static const QRegularExpression replaced(QStringLiteral("REDACTED(?:-\\d+)?"));
    bool changed = false;
    for (size_t i = 0; i < m_patterns.size(); ++i) {
        QRegularExpressionMatchIterator it = m_patterns[i].globalMatch(text);
        if (!it.hasNext())
            continue;
        std::vector<std::pair<qsizetype, qsizetype>> kept; // [start, end) of replacements in `text`
        if (text.contains(QLatin1String("REDACTED")))
            for (auto r = replaced.globalMatch(text); r.hasNext();) {
                const QRegularExpressionMatch m = r.next();
                kept.emplace_back(m.capturedStart(), m.capturedEnd());
            }
        QString out;
        qsizetype last = 0;
        qint64 n = 0;
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            if (m.capturedLength() == 0)
                continue;
            const bool overlaps = std::any_of(kept.begin(), kept.end(), [&m](const std::pair<qsizetype, qsizetype> &span) {
                return m.capturedStart() < span.second && span.first < m.capturedEnd();
            });
            if (overlaps)
                continue;
            out.append(QStringView(text).mid(last, m.capturedStart() - last));
            out.append(pseudonym(m.captured()));
            last = m.capturedEnd();
            ++n;
        }
        if (n == 0)
            continue;
        out.append(QStringView(text).mid(last));
        text = std::move(out);
        m_counts.perPattern[i] += n;
        changed = true;
    }
    return changed;
}

bool BundleRedactor::redact(QString &text)
{
    return !m_patterns.empty() && redactPatterns(text);
}

bool BundleRedactor::redact(QByteArray &utf8Text)
{
    if (m_patterns.empty())
        return false;
    QString text = QString::fromUtf8(utf8Text);
    if (!redactPatterns(text))
        return false;
    utf8Text = text.toUtf8();
    return true;
}

bool BundleRedactor::redact(Json &root, bool numbers)
{
    return !isEmpty() && redactJson(root, numbers, 0);
}

bool BundleRedactor::redactJson(Json &root, bool numbers, int depth)
{
    bool changed = false;
    // An explicit stack: frames may nest deeply, the walk never recurses (except into a string
    // that is itself JSON, at most kMaxJsonInStringDepth deep).
    std::vector<Json *> stack{&root};
    while (!stack.empty()) {
        Json *node = stack.back();
        stack.pop_back();
        if (node->is_object()) {
            // Names first (renaming moves values), then the members to walk: no pointer into the
            // object is taken before it stops changing.
            std::vector<std::pair<std::string, std::string>> renames;
            for (auto it = node->begin(); it != node->end(); ++it) {
                const QString key = QString::fromStdString(it.key());
                const qsizetype keyIndex = m_keyNames.indexOf(key.toLower());
                if (keyIndex >= 0 && !(it->is_string() && isRedacted(it->get_ref<const std::string &>()))) {
                    *it = toStd(pseudonym(QString::fromStdString(it->is_string() ? it->get<std::string>() : it->dump())));
                    ++m_counts.perKeyName[size_t(keyIndex)];
                    changed = true;
                }
                QString renamed = key;
                if (redactPatterns(renamed))
                    renames.emplace_back(it.key(), toStd(renamed));
            }
            for (auto &[from, to] : renames) {
                Json value = std::move((*node)[from]);
                node->erase(from);
                // A name that a pseudonym already holds: keep both values apart.
                std::string name = to;
                for (int n = 2; node->contains(name); ++n)
                    name = to + "#" + std::to_string(n);
                (*node)[name] = std::move(value);
                changed = true;
            }
            for (auto it = node->begin(); it != node->end(); ++it)
                stack.push_back(&it.value());
        } else if (node->is_array()) {
            for (Json &item : *node)
                stack.push_back(&item);
        } else if (node->is_string()) {
            const std::string &value = node->get_ref<const std::string &>();
            // Stringified JSON (common in agent payloads): the rules inside it, as for the frame.
            const size_t first = value.find_first_not_of(" \t\r\n");
            if (depth < kMaxJsonInStringDepth && first != std::string::npos && (value[first] == '{' || value[first] == '[')
                && FrameCodec::nestingDepth(QByteArray::fromRawData(value.data(), qsizetype(value.size())), kMaxParsedDepth) <= kMaxParsedDepth) {
                Json inner = Json::parse(value, nullptr, false);
                if (inner.is_object() || inner.is_array()) {
                    if (redactJson(inner, numbers, depth + 1)) {
                        *node = inner.dump(-1, ' ', false, Json::error_handler_t::replace);
                        changed = true;
                    }
                    continue;
                }
            }
            QString text = QString::fromStdString(value);
            if (redactPatterns(text)) {
                *node = toStd(text);
                changed = true;
            }
        } else if (numbers && node->is_number()) {
            const QString text = QString::fromStdString(node->dump());
            QString replaced = text;
            if (redactPatterns(replaced)) {
                *node = toStd(replaced);
                changed = true;
            }
        }
    }
    return changed;
}

// ---- the bundle members of the header -----------------------------------------------------

namespace {

struct HeaderParts
{
    Json bundle;
    QByteArray pictures;   // the "bundlePictures" array's JSON, or empty
    int picturesWritten = 0;
    qint64 alertsWritten = 0;
};

HeaderParts headerParts(const IncidentContent &content, const BundleOptions &options, const BundleResult &counts,
                        const QString &source, bool sourceRedacted, BundleRedactor &redactor, qint64 &bookmarksInRange)
{
    Json bookmarks = Json::array();
    bookmarksInRange = 0;
    for (const Bookmark &b : content.bookmarks) {
        if ((options.fromMs && b.timeMs < *options.fromMs) || (options.toMs && b.timeMs > *options.toMs))
            continue;
        if (++bookmarksInRange > kMaxBundleBookmarks)
            continue;
        bookmarks.push_back({{"t", b.timeMs}, {"title", toStd(b.title.left(200))}, {"note", toStd(b.note.left(2000))}});
    }
    bookmarksInRange = std::min<qint64>(bookmarksInRange, kMaxBundleBookmarks);
    Json agents = Json::array();
    for (const QString &id : content.selectedAgents.mid(0, kMaxBundleSelection))
        agents.push_back(toStd(id.left(200)));
    Json alerts = Json::array();
    if (content.alerts.is_array())
        for (const Json &a : content.alerts)
            if (alerts.size() < size_t(kMaxBundleAlerts) && a.dump().size() <= size_t(kMaxBundleAlertBytes))
                alerts.push_back(a);
    // What people wrote or the model named: the operator's rules apply (times and counts stay).
    Json texts = {{"note", toStd(content.note.left(kMaxBundleNoteChars))},
                  {"bookmarks", bookmarks},
                  {"selection", {{"agents", agents}, {"message", toStd(content.selectedMessage.left(200))}, {"task", toStd(content.selectedTask.left(200))}}},
                  {"alerts", alerts}};
    if (!sourceRedacted)
        texts["source"] = toStd(source);
    redactor.redact(texts, /*numbers=*/false);
    if (sourceRedacted) // a rewrite: the name as the first pass redacted it
        texts["source"] = toStd(source);

    HeaderParts parts;
    parts.bundle = {{"version", kIncidentBundleVersion},
                    {"createdAt", content.createdAtMs > 0 ? content.createdAtMs : QDateTime::currentMSecsSinceEpoch()},
                    {"from", options.fromMs ? Json(*options.fromMs) : Json()},
                    {"to", options.toMs ? Json(*options.toMs) : Json()},
                    {"redaction",
                     {{"keyNames", redactor.keyNameCount()},
                      {"patterns", redactor.patternCount()},
                      {"replacements", counts.redaction.total() + counts.headerReplacements + redactor.counts().total()},
                      {"binaryFramesLeftOut", counts.redaction.binaryFramesLeftOut}}},
                    {"leftOutBeforeFrom", counts.recordsLeftOutBeforeFrom}};
    for (auto it = texts.begin(); it != texts.end(); ++it)
        parts.bundle[it.key()] = it.value();

    // Pictures last, within what the line can hold beside the rest.
    const qint64 room = kMaxBundleHeaderBytes - qint64(parts.bundle.dump().size()) - 4096;
    qint64 pictureBytes = 0, encoded = 0;
    QByteArray list;
    for (const BundlePicture &p : content.pictures) {
        const qint64 size = (p.png.size() + 2) / 3 * 4 + 200;
        if (p.png.isEmpty() || pictureBytes + p.png.size() > kMaxBundlePictureBytes || encoded + size > room)
            continue;
        pictureBytes += p.png.size();
        encoded += size;
        const Json meta = {{"view", toStd(p.view)}, {"format", "png"}, {"width", p.width}, {"height", p.height}};
        QByteArray item = QByteArray::fromStdString(meta.dump());
        item.chop(1);
        item += ",\"data\":\"" + p.png.toBase64() + "\"}";
        list += (list.isEmpty() ? "[" : ",") + item;
    }
    if (!list.isEmpty())
        parts.pictures = list + ']';
    parts.picturesWritten = int(std::count(list.begin(), list.end(), '{')); // one object per picture; base64 has none
    parts.alertsWritten = qint64(alerts.size());
    return parts;
}

// Message traffic before the range: what the bundle leaves out so that it holds the state at
// `from` without the history (see the header).
class ContextFilter
{
public:
    // Whether `record` (before `from`) is message traffic, to be left out.
    bool isMessageTraffic(const TraceRecord &record)
    {
        const RecordDir dir = recordDir(record.dir);
        if ((dir != RecordDir::Send && dir != RecordDir::Recv) || record.binary || tooDeep(record.raw))
            return false;
        const Json frame = Json::parse(record.raw.constData(), record.raw.constData() + record.raw.size(), nullptr, false);
        if (!frame.is_object())
            return false;
        const QString method = jsonString(frame, "method");
        const Json *id = frame.contains("id") ? &frame["id"] : nullptr;
        if (dir == RecordDir::Send) {
            if (method == QLatin1String("map/send") || method == QLatin1String("map/inject")) {
                if (id && !id->is_null()) {
                    if (m_dropped.size() >= kMaxDropped) { // a hostile trace: requests by the million
                        m_dropped.erase(m_dropped.begin());
                        ++m_forgotten;
                    }
                    m_dropped.emplace(requestKey(record.connection, *id), record.timeMs);
                }
                return true;
            }
            return false;
        }
        if (method.isEmpty())
            return id && m_dropped.erase(requestKey(record.connection, *id)) > 0;
        if (method == QLatin1String("map/message"))
            return true;
        if (method == QLatin1String("map/event")) {
            const Json *params = jsonChild(frame, "params");
            if (!params)
                return false;
            QString error;
            const std::optional<MapEvent> event = eventFromNotification(*params, error);
            if (!event)
                return false;
            const EventFamily family = eventFamily(event->kind);
            if (family != EventFamily::Message && family != EventFamily::Delivery)
                return false;
            // Left out: the numbers it took are said by a "skip" record (skipRecords) before the
            // next record kept, so that they do not read as events the server failed to deliver.
            if (event->sequenceNumber >= 0 && !event->subscriptionId.isEmpty()) {
                const std::pair<int, QString> key{record.connection, event->subscriptionId};
                if (m_skipped.size() < kMaxSkipped || m_skipped.count(key)) {
                    qint64 &upTo = m_skipped[key];
                    upTo = std::max(upTo, event->sequenceNumber);
                } else {
                    ++m_forgotten; // its numbers may read as a gap: less than memory without end
                }
            }
            return true;
        }
        return false;
    }

    // In the range: the answer to a request left out before it (it would read as unmatched).
    // Requests unanswered after kAnswerWaitMs are forgotten, so that this stops parsing frames.
    bool isAnswerToLeftOut(const TraceRecord &record)
    {
        if (m_dropped.empty() || recordDir(record.dir) != RecordDir::Recv || record.binary || tooDeep(record.raw))
            return false;
        for (auto it = m_dropped.begin(); it != m_dropped.end();)
            it = record.timeMs - it->second > kAnswerWaitMs ? m_dropped.erase(it) : std::next(it);
        const Json frame = Json::parse(record.raw.constData(), record.raw.constData() + record.raw.size(), nullptr, false);
        if (!frame.is_object() || frame.contains("method") || !frame.contains("id"))
            return false;
        return m_dropped.erase(requestKey(record.connection, frame["id"])) > 0;
    }

    // The "skip" records owed before the next record kept (docs/trace-format.md), then none. The
    // subscription id goes through the same rules as the frames that name it.
    std::vector<TraceRecord> skipRecords(qint64 timeMs, BundleRedactor &redactor)
    {
        std::vector<TraceRecord> out;
        for (const auto &[key, upTo] : m_skipped) {
            // Key names apply too (a subscriptionId redacted by name in the frames is here).
            Json skip = {{"subscriptionId", key.second.toStdString()}, {"upToSequence", upTo}};
            if (redactor.redact(skip, false))
                ++m_skipsChanged;
            out.push_back({timeMs, QStringLiteral("skip"), key.first, QByteArray::fromStdString(skip.dump()), false, Json()});
        }
        m_skipped.clear();
        return out;
    }
    qint64 skipsChanged() const { return m_skipsChanged; }
    qint64 forgotten() const { return m_forgotten; }

private:
    static constexpr qint64 kAnswerWaitMs = 5 * 60 * 1000;
    // What is remembered of the traffic left out, at most (a hostile trace must not grow it without
    // end): requests awaiting their answer, and subscriptions whose skipped numbers are owed.
    static constexpr size_t kMaxDropped = 100000;
    static constexpr size_t kMaxSkipped = 10000;
    static QString requestKey(int connection, const Json &id)
    {
        return QString::number(connection) + QLatin1Char(':') + QString::fromStdString(id.dump());
    }
    std::map<QString, qint64> m_dropped;   // request key → when it was sent
    std::map<std::pair<int, QString>, qint64> m_skipped;
    qint64 m_skipsChanged = 0;
    qint64 m_forgotten = 0; // past kMaxDropped or kMaxSkipped
};

// Redacts one record in place; false: the record cannot be searched and is left out.
bool redactRecord(TraceRecord &record, BundleRedactor &redactor, bool &changed)
{
    changed = false;
    if (redactor.isEmpty())
        return true;
    const RecordDir dir = recordDir(record.dir);
    if (record.binary)
        return false;
    if (dir == RecordDir::Action) {
        changed = redactor.redact(record.extra, true);
        return true;
    }
    if (dir == RecordDir::Send || dir == RecordDir::Recv || dir == RecordDir::Skip) {
        if (tooDeep(record.raw))
            return false; // cannot be searched safely
        Json frame = Json::parse(record.raw.constData(), record.raw.constData() + record.raw.size(), nullptr, false);
        if (!frame.is_discarded()) {
            if (redactor.redact(frame, dir != RecordDir::Skip)) {
                record.raw = QByteArray::fromStdString(frame.dump(-1, ' ', false, Json::error_handler_t::replace));
                changed = true;
            }
            return true;
        }
    }
    changed = redactor.redact(record.raw); // not JSON; open URLs; close reasons; notes
    return true;
}

// The bundle's file, or nothing (counting only). Written beside the target and put in its place
// only once whole (CompressingWriter::Mode::Replace): a failure leaves the target as it was.
class BundleOutput
{
public:
    // Empty path: counting only.
    bool open(const QString &path, QString *error)
    {
        m_counting = path.isEmpty();
        return m_counting || m_writer.open(path, compressionFromPath(path), error);
    }
    bool write(const QByteArray &line) { return m_counting || m_writer.write(line); }
    QString errorString() const { return m_writer.errorString(); }
    bool commit(QString *error)
    {
        if (m_counting || m_writer.close())
            return true;
        *error = m_writer.errorString();
        return false;
    }

private:
    bool m_counting = true;
    CompressingWriter m_writer; // abandoned (the old file kept) unless committed
};

enum class Pass { First, Rewrite };

} // namespace

namespace {

BundleResult writeBundle(const QString &inPath, const QString &outPath, const BundleOptions &options, Pass pass,
                         const BundleResult *first)
{
    BundleResult result;
    auto fail = [&result](BundleResult::Failure failure, const QString &error) {
        result.failure = failure;
        result.error = error;
        return result;
    };
    ErrorOr<BundleRedactor> made = BundleRedactor::make(options.redactKeyNames, options.redactPatterns);
    if (!made)
        return fail(BundleResult::Failure::BadOptions, made.error());
    if (options.fromMs && options.toMs && *options.fromMs > *options.toMs)
        return fail(BundleResult::Failure::BadOptions, QStringLiteral("The range ends before it starts"));
    if (!outPath.isEmpty()) {
        if (isSameFile(inPath, outPath))
            return fail(BundleResult::Failure::BadOptions, QStringLiteral("The bundle cannot replace the trace it is cut from"));
    }
    BundleRedactor redactor = std::move(*made);
    // The records' pseudonyms are those of the pass that made them, when there was one.
    if (pass == Pass::Rewrite && first && first->pseudonyms)
        redactor.usePseudonyms(first->pseudonyms);
    BundleRedactor recordRedactor = redactor; // shares the pseudonyms; counts apart
    result.keyNames = redactor.keyNames();
    result.patternNumbers = redactor.patternNumbers();

    TraceFileReader reader;
    QString error;
    if (!reader.open(inPath, &error))
        return fail(BundleResult::Failure::InputUnreadable, error);
    BundleOutput out;
    if (!out.open(outPath, &error))
        return fail(BundleResult::Failure::OutputUnwritable, error);

    ContextFilter context;
    const QString source = pass == Pass::First ? QFileInfo(inPath).fileName() : QString();
    // The header comes first and carries counts known only at the end: they come from `first`
    // (writeIncidentBundle counts in a pass of its own, the preview, before writing).
    const BundleResult counts = first ? *first : BundleResult();
    auto headerLine = [&](qint64 firstTimeMs) {
        const TraceReadStats &st = reader.stats();
        QString url = QStringLiteral("file:%1").arg(QFileInfo(inPath).fileName());
        qint64 started = firstTimeMs;
        Json extra = Json::object();
        QString sourceName = source;
        if (st.header.is_object()) {
            url = jsonString(st.header, "url");
            started = jsonInt(st.header, "startedAt", started);
            if (const Json *server = jsonChild(st.header, "server"))
                extra["server"] = *server;
            if (pass == Pass::Rewrite)
                if (const Json *old = jsonChild(st.header, "bundle"))
                    sourceName = jsonString(*old, "source");
        }
        BundleRedactor dataRedactor = redactor; // the same pseudonyms, its own counts
        dataRedactor.resetCounts();
        if (pass == Pass::First) { // a rewrite takes them from the slice, redacted already
            dataRedactor.redact(url);
            if (extra.contains("server"))
                dataRedactor.redact(extra["server"], false);
            result.headerReplacements = dataRedactor.counts().total();
            dataRedactor.resetCounts();
        } else if (first) {
            result.headerReplacements = first->headerReplacements;
        }
        const HeaderParts parts = headerParts(options.content, options, counts, sourceName, pass == Pass::Rewrite,
                                              dataRedactor, result.bookmarksInRange);
        result.dataReplacements = result.headerReplacements + dataRedactor.counts().total();
        result.picturesWritten = parts.picturesWritten;
        result.alertsWritten = parts.alertsWritten;
        extra["bundle"] = parts.bundle;
        QByteArray line = encodeHeaderLine(url, started, extra);
        if (!parts.pictures.isEmpty()) { // after the secret rules: see the header
            line.chop(2); // "}\n"
            line += ",\"bundlePictures\":" + parts.pictures + "}\n";
        }
        return line;
    };

    TraceRecord record;
    bool headerWritten = false;
    qint64 nextProgress = 0;
    while (reader.next(record)) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            return fail(BundleResult::Failure::Cancelled, QStringLiteral("Cancelled"));
        if (options.progress && reader.bytesRead() >= nextProgress) {
            options.progress(reader.bytesRead(), reader.bytesTotal());
            nextProgress = reader.bytesRead() + 1024 * 1024;
        }
        if (!headerWritten) {
            const QByteArray line = headerLine(record.timeMs);
            if (line.size() > kMaxBundleHeaderBytes + 1024 * 1024) // the bounds above keep it far below
                return fail(BundleResult::Failure::BadOptions, QStringLiteral("The bundle's data is too large for its header"));
            if (!out.write(line))
                return fail(BundleResult::Failure::OutputUnwritable, out.errorString());
            headerWritten = true;
        }
        if (pass == Pass::First) {
            if (options.toMs && record.timeMs > *options.toMs)
                break;
            const bool before = options.fromMs && record.timeMs < *options.fromMs;
            if (before ? context.isMessageTraffic(record) : context.isAnswerToLeftOut(record)) {
                ++result.recordsLeftOutBeforeFrom;
                continue;
            }
            for (TraceRecord &skip : context.skipRecords(record.timeMs, recordRedactor)) {
                if (!out.write(encodeRecordLine(skip)))
                    return fail(BundleResult::Failure::OutputUnwritable, out.errorString());
                ++result.recordsWritten;
            }
            bool changed = false;
            if (!redactRecord(record, recordRedactor, changed)) {
                ++result.redaction.binaryFramesLeftOut;
                continue;
            }
            result.redaction.recordsChanged += changed ? 1 : 0;
        }
        if (!out.write(encodeRecordLine(record)))
            return fail(BundleResult::Failure::OutputUnwritable, out.errorString());
        ++result.recordsWritten;
    }
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
        return fail(BundleResult::Failure::Cancelled, QStringLiteral("Cancelled"));
    if (!headerWritten && !out.write(headerLine(0)))
        return fail(BundleResult::Failure::OutputUnwritable, out.errorString());
    if (pass == Pass::First) {
        for (TraceRecord &skip : context.skipRecords(options.toMs.value_or(record.timeMs), recordRedactor)) {
            if (!out.write(encodeRecordLine(skip)))
                return fail(BundleResult::Failure::OutputUnwritable, out.errorString());
            ++result.recordsWritten;
        }
        const qint64 binary = result.redaction.binaryFramesLeftOut;
        const qint64 changed = result.redaction.recordsChanged + context.skipsChanged();
        result.redaction = recordRedactor.counts();
        result.redaction.binaryFramesLeftOut = binary;
        result.redaction.recordsChanged = changed;
        result.contextForgotten = context.forgotten();
        result.pseudonyms = redactor.pseudonyms();
    } else if (first) {
        result.redaction = first->redaction;
        result.recordsLeftOutBeforeFrom = first->recordsLeftOutBeforeFrom;
    }
    if (!out.commit(&error))
        return fail(BundleResult::Failure::OutputUnwritable, error);
    result.stats = reader.stats();
    return result;
}

} // namespace

BundleResult writeIncidentBundle(const QString &inPath, const QString &outPath, const BundleOptions &options)
{
    if (outPath.isEmpty())
        return writeBundle(inPath, QString(), options, Pass::First, nullptr);
    // The header comes first and carries the counts, which are known only at the end: count in
    // a first pass (the preview), then write. Both read the source; the second writes.
    const BundleResult preview = writeBundle(inPath, QString(), options, Pass::First, nullptr);
    if (!preview.ok())
        return preview;
    return writeBundle(inPath, outPath, options, Pass::First, &preview);
}

BundleResult rewriteIncidentBundle(const QString &inPath, const QString &outPath, const BundleOptions &options,
                                   const BundleResult &first)
{
    return writeBundle(inPath, outPath, options, Pass::Rewrite, &first);
}

// ---- reading -----------------------------------------------------------------------------------

std::optional<IncidentInfo> incidentFromHeader(const Json &header)
{
    const Json *bundle = header.is_object() ? jsonChild(header, "bundle") : nullptr;
    if (!bundle)
        return std::nullopt;
    IncidentInfo info;
    auto text = [&](const Json &object, const char *key) {
        const auto it = object.find(key);
        if (it == object.end() || it->is_null())
            return QString();
        if (!it->is_string()) {
            ++info.damagedMembers;
            return QString();
        }
        return QString::fromStdString(it->get<std::string>());
    };
    auto time = [&](const char *key) -> std::optional<qint64> {
        const auto it = bundle->find(key);
        if (it == bundle->end() || it->is_null())
            return std::nullopt;
        if (!it->is_number_integer()) {
            ++info.damagedMembers;
            return std::nullopt;
        }
        return it->get<qint64>();
    };
    IncidentContent &c = info.content;
    c.note = text(*bundle, "note");
    info.source = text(*bundle, "source");
    info.fromMs = time("from");
    info.toMs = time("to");
    c.createdAtMs = time("createdAt").value_or(0);
    if (const auto it = bundle->find("bookmarks"); it != bundle->end() && it->is_array()) {
        for (const Json &b : *it) {
            if (!b.is_object() || !b.contains("t") || !b["t"].is_number_integer()) {
                ++info.damagedMembers;
                continue;
            }
            c.bookmarks.append(Bookmark{b["t"].get<qint64>(), text(b, "title"), text(b, "note")});
        }
    }
    if (const Json *selection = jsonChild(*bundle, "selection")) {
        if (const auto agents = selection->find("agents"); agents != selection->end() && agents->is_array())
            for (const Json &id : *agents) {
                if (id.is_string())
                    c.selectedAgents.append(QString::fromStdString(id.get<std::string>()));
                else
                    ++info.damagedMembers;
            }
        c.selectedMessage = text(*selection, "message");
        c.selectedTask = text(*selection, "task");
    }
    if (const auto it = bundle->find("alerts"); it != bundle->end() && it->is_array())
        for (const Json &a : *it) {
            if (a.is_object())
                c.alerts.push_back(a);
            else
                ++info.damagedMembers;
        }
    qint64 pictureBytes = 0;
    if (const auto it = header.find("bundlePictures"); it != header.end() && it->is_array())
        for (const Json &p : *it) {
            const auto data = p.is_object() ? p.find("data") : p.end();
            if (!p.is_object() || data == p.end() || !data->is_string()) {
                ++info.damagedMembers;
                continue;
            }
            const QByteArray base64 = QByteArray::fromStdString(data->get<std::string>());
            auto decoded = QByteArray::fromBase64Encoding(base64, QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded || decoded.decoded.isEmpty() || pictureBytes + decoded.decoded.size() > kMaxBundlePictureBytes) {
                ++info.damagedMembers;
                continue;
            }
            pictureBytes += decoded.decoded.size();
            c.pictures.push_back({text(p, "view"), decoded.decoded, int(jsonInt(p, "width", 0)), int(jsonInt(p, "height", 0))});
        }
    if (const Json *r = jsonChild(*bundle, "redaction")) {
        info.keyNamesUsed = int(jsonInt(*r, "keyNames", 0));
        info.patternsUsed = int(jsonInt(*r, "patterns", 0));
        info.replacements = jsonInt(*r, "replacements", 0);
        info.binaryFramesLeftOut = jsonInt(*r, "binaryFramesLeftOut", 0);
    }
    info.recordsLeftOutBeforeFrom = jsonInt(*bundle, "leftOutBeforeFrom", 0);
    return info;
}

} // namespace mapi
