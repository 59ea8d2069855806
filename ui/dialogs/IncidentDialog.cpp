#include "dialogs/IncidentDialog.h"

#include "panels/AgentsPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"

#include <QBuffer>
#include <QCheckBox>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDateTimeEdit>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPixmap>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QStandardPaths>
#include <QToolButton>
#include <QUrl>
#include <QDateTime>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

namespace mapi::ui {

namespace {

// The pictures' size: large enough to read a few hundred agents, small enough that three fit
// the bundle's picture budget many times over as PNG.
constexpr int kPictureWidth = 1400;
constexpr int kPictureHeight = 900;

QByteArray pngOf(const QImage &image)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

void settle(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

QString suggestedIncidentFileName(const QString &tracePath, const QString &sourceLabel, qint64 endMs)
{
    QString what = tracePath.isEmpty() ? QUrl(sourceLabel).authority() : QFileInfo(tracePath).fileName();
    if (what.isEmpty())
        what = sourceLabel;
    for (const char *suffix : {".incident.jsonl.zst", ".jsonl.zst", ".jsonl.gz", ".ndjson.zst", ".ndjson.gz", ".jsonl", ".ndjson", ".json"})
        if (what.endsWith(QLatin1String(suffix))) {
            what.chop(qsizetype(qstrlen(suffix)));
            break;
        }
    what.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    what = what.left(60);
    while (what.endsWith(u'-') || what.endsWith(u'.'))
        what.chop(1);
    const QString when = endMs > 0 ? QDateTime::fromMSecsSinceEpoch(endMs).toString(QStringLiteral("yyyyMMdd-HHmm"))
                                   : QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmm"));
    return QStringLiteral("incident-%1%2.incident.jsonl.zst").arg(what.isEmpty() ? QString() : what + u'-', when);
}

std::vector<BundlePicture> drawBundlePictures(const QString &bundlePath, qint64 atMs, QString *error)
{
    std::vector<BundlePicture> pictures;
    InspectorSession session;
    if (!session.openTraceAndWait(bundlePath, error))
        return pictures;
    if (session.replay())
        session.replay()->seek(atMs);
    SelectionHub hub;
    // The bundle's selection (as redacted) stands out in the pictures as it did in the window.
    if (const std::optional<IncidentInfo> info = incidentFromHeader(session.traceStats().header))
        hub.selectAgents(info->content.selectedAgents);

    TopologyView topology(&session, &hub);
    topology.setAttribute(Qt::WA_DontShowOnScreen);
    topology.resize(kPictureWidth, kPictureHeight);
    topology.show();
    // The layout runs on a worker; wait for it (bounded: a picture of a layout still moving is
    // better than none).
    QElapsedTimer waited;
    waited.start();
    do
        settle(50);
    while (!topology.isSettled() && waited.elapsed() < 5000);
    topology.zoomToFit(false);
    settle(50);
    {
        QImage image(topology.size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(topology.palette().color(QPalette::Base));
        QPainter painter(&image);
        topology.renderTo(painter);
        painter.end();
        pictures.push_back({QStringLiteral("topology"), pngOf(image), image.width(), image.height()});
    }

    TimelineView timeline(session.store(), &hub);
    timeline.setAttribute(Qt::WA_DontShowOnScreen);
    timeline.resize(kPictureWidth, kPictureHeight);
    timeline.show();
    settle(50);
    timeline.showAll();
    settle(50);
    {
        QImage image(timeline.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(timeline.palette().color(QPalette::Base));
        QPainter painter(&image);
        timeline.renderTo(painter);
        painter.end();
        pictures.push_back({QStringLiteral("timeline"), pngOf(image), image.width(), image.height()});
    }

    AgentsPanel agents(&session, &hub);
    agents.setAttribute(Qt::WA_DontShowOnScreen);
    agents.resize(kPictureWidth, kPictureHeight);
    agents.show();
    settle(100);
    const QImage table = agents.grab().toImage();
    pictures.push_back({QStringLiteral("agents"), pngOf(table), table.width(), table.height()});
    return pictures;
}

IncidentDialog::IncidentDialog(const Context &context, QWidget *parent)
    : QDialog(parent)
    , m_context(context)
{
    setWindowTitle(tr("Export incident"));
    setObjectName(QStringLiteral("incidentDialog"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(tr("One file to hand on: the trace of a time range (with the system as it was at its start), "
                                "your note, and what you choose below. It opens in MAP Inspector like any trace. "
                                "Redaction applies to every part of it; the pictures are drawn from the redacted bundle."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_form = new QWidget(this);
    auto *form = new QFormLayout(m_form);
    form->setContentsMargins(0, 0, 0, 0);
    const QString timeFormat = QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz");
    m_from = new QDateTimeEdit(this);
    m_to = new QDateTimeEdit(this);
    for (QDateTimeEdit *edit : {m_from, m_to}) {
        edit->setDisplayFormat(timeFormat);
        edit->setMinimumDateTime(QDateTime::fromMSecsSinceEpoch(context.startMs));
        edit->setMaximumDateTime(QDateTime::fromMSecsSinceEpoch(std::max(context.endMs, context.startMs)));
    }
    m_from->setObjectName(QStringLiteral("incidentFrom"));
    m_to->setObjectName(QStringLiteral("incidentTo"));
    m_from->setDateTime(QDateTime::fromMSecsSinceEpoch(context.startMs));
    m_to->setDateTime(QDateTime::fromMSecsSinceEpoch(context.positionMs > 0 ? context.positionMs : context.endMs));
    form->addRow(tr("From"), m_from);
    form->addRow(tr("To"), m_to);
    m_note = new QPlainTextEdit(this);
    m_note->setObjectName(QStringLiteral("incidentNote"));
    m_note->setPlaceholderText(tr("What happened, what you saw, what to look at first"));
    m_note->setMaximumHeight(80);
    form->addRow(tr("Note"), m_note);
    m_keyNames = new QLineEdit(this);
    m_keyNames->setObjectName(QStringLiteral("incidentKeyNames"));
    m_keyNames->setPlaceholderText(tr("e.g. email, customer_id, prompt (comma-separated, any case)"));
    form->addRow(tr("Redact keys"), m_keyNames);
    m_patterns = new QPlainTextEdit(this);
    m_patterns->setObjectName(QStringLiteral("incidentPatterns"));
    m_patterns->setPlaceholderText(tr("One regular expression per line, e.g. [\\w.]+@[\\w.]+"));
    m_patterns->setMaximumHeight(70);
    form->addRow(tr("Redact matches"), m_patterns);
    m_withBookmarks = new QCheckBox(tr("Bookmarks and their notes, those in the range (%n in all)", nullptr, int(context.bookmarks.size())), this);
    m_withSelection = new QCheckBox(tr("The selection (%n agent(s))", nullptr, int(context.selectedAgents.size())), this);
    m_withAlerts = new QCheckBox(tr("The open alerts (%n)", nullptr, int(context.alerts.size())), this);
    m_withPictures = new QCheckBox(tr("Pictures of the topology, the timeline and the agents table"), this);
    for (QCheckBox *box : {m_withBookmarks, m_withSelection, m_withAlerts, m_withPictures}) {
        box->setChecked(true);
        form->addRow(QString(), box);
    }
    m_withSelection->setEnabled(!context.selectedAgents.isEmpty() || !context.selectedMessage.isEmpty() || !context.selectedTask.isEmpty());
    layout->addWidget(m_form);
    // Another run in the window: this dialog's range, bookmarks and selection are not its.
    if (context.session)
        connect(context.session, &InspectorSession::sourceChanged, this, &QWidget::close);

    m_counts = new QLabel(this);
    m_counts->setObjectName(QStringLiteral("incidentCounts"));
    m_counts->setWordWrap(true);
    m_counts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_counts->setMinimumHeight(90);
    m_counts->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_counts->setText(tr("Preview counts what the bundle will hold and what the redaction replaces."));
    layout->addWidget(m_counts, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_preview = buttons->addButton(tr("&Preview"), QDialogButtonBox::ActionRole);
    m_export = buttons->addButton(tr("&Export…"), QDialogButtonBox::AcceptRole);
    m_preview->setObjectName(QStringLiteral("incidentPreview"));
    m_export->setObjectName(QStringLiteral("incidentExport"));
    connect(m_preview, &QPushButton::clicked, this, &IncidentDialog::preview);
    connect(m_export, &QPushButton::clicked, this, [this] {
        // Suggested beside the trace (live: the documents folder), named after what was
        // watched and when the range ends.
        const QString folder = !m_context.tracePath.isEmpty() ? QFileInfo(m_context.tracePath).absolutePath()
                                                              : QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        const QString name = suggestedIncidentFileName(m_context.tracePath,
                                                       m_context.session ? m_context.session->sourceLabel() : QString(),
                                                       m_context.positionMs);
        const QString path = QFileDialog::getSaveFileName(this, tr("Export incident"), QDir(folder).filePath(name),
                                                          tr("Incident bundle (*.incident.jsonl.zst)"));
        if (path.isEmpty())
            return;
        exportTo(path.endsWith(QLatin1String(".zst")) ? path : path + QStringLiteral(".incident.jsonl.zst"));
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(640, 620);
}

IncidentDialog::~IncidentDialog()
{
    stopWorker();
    if (!m_pendingSlice.isEmpty())
        QFile::remove(m_pendingSlice);
    // A save of the live journal still copying into the private folder: the folder goes once
    // the copy has ended, not under it.
    if (m_savingLive && m_tempDir && m_context.session) {
        m_tempDir->setAutoRemove(false);
        const QString folder = m_tempDir->path();
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = connect(m_context.session, &InspectorSession::sessionSaved, m_context.session,
                              [connection, folder](bool, const QString &path, const QString &) {
                                  if (!path.startsWith(folder))
                                      return;
                                  QObject::disconnect(*connection);
                                  QDir(folder).removeRecursively();
                              });
    }
}

void IncidentDialog::reject()
{
    if (!m_drawing)
        QDialog::reject();
}

void IncidentDialog::closeEvent(QCloseEvent *event)
{
    if (m_drawing)
        event->ignore();
    else
        QDialog::closeEvent(event);
}

void IncidentDialog::setRange(qint64 fromMs, qint64 toMs)
{
    m_from->setDateTime(QDateTime::fromMSecsSinceEpoch(fromMs));
    m_to->setDateTime(QDateTime::fromMSecsSinceEpoch(toMs));
}

void IncidentDialog::setNote(const QString &note) { m_note->setPlainText(note); }

void IncidentDialog::setRedaction(const QStringList &keyNames, const QStringList &patterns)
{
    m_keyNames->setText(keyNames.join(QStringLiteral(", ")));
    m_patterns->setPlainText(patterns.join(QLatin1Char('\n')));
}

void IncidentDialog::setPictures(bool on) { m_withPictures->setChecked(on); }

QString IncidentDialog::previewText() const { return m_counts->text(); }

BundleOptions IncidentDialog::options() const
{
    BundleOptions o;
    o.fromMs = m_from->dateTime().toMSecsSinceEpoch();
    o.toMs = m_to->dateTime().toMSecsSinceEpoch();
    // The edits show milliseconds, so a range that ends at the run's end keeps its last record.
    for (const QString &name : m_keyNames->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        o.redactKeyNames << name.trimmed();
    for (const QString &line : m_patterns->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (!line.trimmed().isEmpty())
            o.redactPatterns << line;
    IncidentContent &c = o.content;
    c.note = m_note->toPlainText();
    if (m_withBookmarks->isChecked())
        c.bookmarks = m_context.bookmarks;
    if (m_withSelection->isChecked()) {
        c.selectedAgents = m_context.selectedAgents;
        c.selectedMessage = m_context.selectedMessage;
        c.selectedTask = m_context.selectedTask;
    }
    if (m_withAlerts->isChecked())
        c.alerts = m_context.alerts;
    return o;
}

void IncidentDialog::saveLiveSessionThen(const QString &out, bool writing)
{
    // A live session: its journal, saved once for this dialog (off the GUI thread; the run
    // starts when the copy is complete).
    InspectorSession *session = m_context.session;
    auto fail = [this, writing](const QString &error) {
        m_savingLive = false;
        setBusy(false, tr("Cannot read the run: %1").arg(error));
        Q_EMIT writing ? exported(false, error) : previewed(false);
    };
    if (!session) {
        fail(tr("Nothing is open"));
        return;
    }
    if (!m_tempDir)
        m_tempDir = std::make_unique<QTemporaryDir>();
    if (!m_tempDir->isValid()) {
        fail(m_tempDir->errorString());
        return;
    }
    const QString path = m_tempDir->filePath(kLiveCopyName);
    m_savingLive = true;
    setBusy(true, tr("Saving the session's history…"));
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = connect(session, &InspectorSession::sessionSaved, this,
                          [this, connection, path, out, writing, fail](bool ok, const QString &saved, const QString &error) {
                              if (saved != path)
                                  return; // another save of the window's
                              disconnect(*connection);
                              if (!ok) {
                                  fail(error);
                                  return;
                              }
                              m_savingLive = false;
                              m_liveCopy = path;
                              runWorker(out, writing);
                          });
    QString error;
    if (!session->saveSessionAs(path, &error)) {
        disconnect(*connection);
        fail(error);
    }
}

void IncidentDialog::setBusy(bool busy, const QString &status)
{
    // The form too: what runs uses the form as it was when it started (m_runOptions).
    m_form->setEnabled(!busy);
    m_preview->setEnabled(!busy);
    m_export->setEnabled(!busy);
    m_status->setText(status);
}

void IncidentDialog::stopWorker()
{
    if (!m_worker)
        return;
    m_cancel->store(true);
    m_worker->wait();
    delete m_worker;
    m_worker = nullptr;
}

void IncidentDialog::preview() { runWorker(QString(), false); }

void IncidentDialog::exportTo(const QString &path) { runWorker(path, true); }

void IncidentDialog::runWorker(const QString &out, bool writing)
{
    if (m_savingLive)
        return;
    stopWorker();
    const QString source = m_context.tracePath.isEmpty() ? m_liveCopy : m_context.tracePath;
    if (source.isEmpty()) {
        saveLiveSessionThen(out, writing);
        return;
    }
    if (writing) {
        if (isSameFile(out, source) || (m_context.session && isSameFile(out, m_context.session->tracePath()))) {
            m_status->setText(tr("The bundle cannot replace the trace it is cut from."));
            Q_EMIT exported(false, m_status->text());
            return;
        }
    }
    setBusy(true, writing ? tr("Writing the bundle…") : tr("Counting…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_runOptions = options();
    BundleOptions o = m_runOptions;
    o.cancel = m_cancel.get();
    // Written first without pictures, beside the target; the pictures are drawn from it.
    const QString slice = writing ? out + QStringLiteral(".slice.jsonl.zst") : QString();
    m_pendingSlice = slice;
    QPointer<IncidentDialog> self(this);
    auto cancel = m_cancel;
    m_worker = QThread::create([self, source, slice, o, out, writing, cancel] {
        const BundleResult result = writeIncidentBundle(source, slice, o);
        if (cancel->load()) {
            if (!slice.isEmpty())
                QFile::remove(slice);
            return;
        }
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, result, out, writing, slice] {
                if (self)
                    self->workerDone(result, out, writing);
                else if (!slice.isEmpty())
                    QFile::remove(slice);
            },
            Qt::QueuedConnection);
    });
    m_worker->start();
}

void IncidentDialog::workerDone(const BundleResult &result, const QString &out, bool writing)
{
    if (m_worker) {
        m_worker->wait();
        delete m_worker;
        m_worker = nullptr;
    }
    m_result = result;
    if (!result.ok()) {
        m_pendingSlice.clear(); // a failed pass leaves nothing (BundleOutput)
        setBusy(false, tr("Failed: %1").arg(result.error));
        Q_EMIT writing ? exported(false, result.error) : previewed(false);
        return;
    }
    showCounts(result, writing);
    if (!writing) {
        setBusy(false, QString());
        Q_EMIT previewed(true);
        return;
    }
    finishExport(out + QStringLiteral(".slice.jsonl.zst"), out);
}

void IncidentDialog::finishExport(const QString &slicePath, const QString &out)
{
    BundleOptions o = m_runOptions;
    if (m_withPictures->isChecked()) {
        setBusy(true, tr("Drawing the pictures from the bundle…"));
        QString error;
        m_drawing = true;
        o.content.pictures = drawBundlePictures(slicePath, *o.toMs, &error);
        m_drawing = false;
        if (o.content.pictures.empty())
            m_status->setText(tr("No pictures: %1").arg(error));
    }
    // The records are copied as they are under the new header: on the worker too (a large range
    // is many megabytes).
    setBusy(true, tr("Writing the bundle with its pictures…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    o.cancel = m_cancel.get();
    QPointer<IncidentDialog> self(this);
    auto cancel = m_cancel;
    const BundleResult first = m_result;
    m_pendingSlice.clear(); // the worker removes it
    m_worker = QThread::create([self, slicePath, out, o, first, cancel] {
        const BundleResult written = rewriteIncidentBundle(slicePath, out, o, first);
        QFile::remove(slicePath);
        if (cancel->load())
            return;
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, written, out] {
                if (!self)
                    return;
                if (self->m_worker) {
                    self->m_worker->wait();
                    delete self->m_worker;
                    self->m_worker = nullptr;
                }
                if (!written.ok()) {
                    self->setBusy(false, tr("Failed: %1").arg(written.error));
                    Q_EMIT self->exported(false, written.error);
                    return;
                }
                self->setBusy(false, tr("Written to %1 (%n picture(s))", nullptr, written.picturesWritten).arg(QDir::toNativeSeparators(out)));
                Q_EMIT self->exported(true, out);
            },
            Qt::QueuedConnection);
    });
    m_worker->start();
}

void IncidentDialog::showCounts(const BundleResult &r, bool writing)
{
    const BundleOptions &o = m_runOptions;
    QStringList lines;
    lines << tr("<b>%1 records</b> %2; %3 message records before the start left out (the state at the start is kept).")
                 .arg(r.recordsWritten)
                 .arg(writing ? tr("written") : tr("in the range"))
                 .arg(r.recordsLeftOutBeforeFrom);
    if (o.redactKeyNames.isEmpty() && o.redactPatterns.isEmpty()) {
        lines << tr("No redaction beyond the secrets every trace loses (tokens, keys, passwords).");
    } else {
        lines << tr("<b>%1 replacements</b> in %2 records, and %3 in the note, bookmarks, selection, alerts and header:")
                     .arg(r.redaction.total())
                     .arg(r.redaction.recordsChanged)
                     .arg(r.dataReplacements);
        for (size_t i = 0; i < r.redaction.perKeyName.size() && i < size_t(r.keyNames.size()); ++i)
            lines << tr("&nbsp;&nbsp;key <code>%1</code>: %2").arg(r.keyNames[int(i)].toHtmlEscaped()).arg(r.redaction.perKeyName[i]);
        // The operator's own patterns, shown back to them (never written to the bundle).
        for (size_t i = 0; i < r.redaction.perPattern.size() && i < r.patternNumbers.size(); ++i)
            lines << tr("&nbsp;&nbsp;pattern <code>%1</code>: %2")
                         .arg(o.redactPatterns.value(r.patternNumbers[i] - 1).toHtmlEscaped())
                         .arg(r.redaction.perPattern[i]);
        if (r.redaction.binaryFramesLeftOut > 0)
            lines << tr("%1 binary frames left out (they cannot be searched).").arg(r.redaction.binaryFramesLeftOut);
        lines << tr("Each redacted text becomes REDACTED-<i>n</i>, the same text the same <i>n</i> everywhere.");
    }
    lines << tr("With it: %1 bookmark(s), %2 selected agent(s), %3 alert(s); the note and these are redacted by the same rules.")
                 .arg(r.bookmarksInRange)
                 .arg(o.content.selectedAgents.size())
                 .arg(o.content.alerts.size());
    m_counts->setText(lines.join(QStringLiteral("<br>")));
}

IncidentInfoDialog::IncidentInfoDialog(const IncidentInfo &info, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Incident"));
    setObjectName(QStringLiteral("incidentInfoDialog"));
    auto *layout = new QVBoxLayout(this);
    auto time = [](std::optional<qint64> ms) {
        return ms ? QDateTime::fromMSecsSinceEpoch(*ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")) : tr("open");
    };
    QStringList lines;
    lines << tr("<b>Range</b> %1 – %2, cut from %3").arg(time(info.fromMs), time(info.toMs), info.source.toHtmlEscaped());
    if (info.content.createdAtMs > 0)
        lines << tr("<b>Made</b> %1").arg(time(info.content.createdAtMs));
    lines << tr("<b>Redaction</b> %1 key name(s), %2 pattern(s): %3 replacement(s); %4 message record(s) before the start left out")
                 .arg(info.keyNamesUsed)
                 .arg(info.patternsUsed)
                 .arg(info.replacements)
                 .arg(info.recordsLeftOutBeforeFrom);
    lines << tr("<b>With it</b> %1 bookmark(s), %2 selected agent(s), %3 alert(s), %4 picture(s)")
                 .arg(info.content.bookmarks.size())
                 .arg(info.content.selectedAgents.size())
                 .arg(info.content.alerts.size())
                 .arg(info.content.pictures.size());
    if (info.damagedMembers > 0)
        lines << tr("%n part(s) of the bundle data could not be read and were skipped", nullptr, info.damagedMembers);
    auto *facts = new QLabel(lines.join(QStringLiteral("<br>")), this);
    facts->setWordWrap(true);
    layout->addWidget(facts);
    auto *note = new QPlainTextEdit(info.content.note.isEmpty() ? tr("(no note)") : info.content.note, this);
    note->setObjectName(QStringLiteral("incidentInfoNote"));
    note->setReadOnly(true);
    note->setMaximumHeight(90);
    layout->addWidget(note);
    QStringList alerts;
    for (const Json &a : info.content.alerts)
        alerts << QStringLiteral("%1 · %2 · %3").arg(jsonString(a, "severity"), jsonString(a, "alert"), jsonString(a, "reason"));
    if (!alerts.isEmpty()) {
        auto *list = new QLabel(tr("<b>Alerts</b><br>") + alerts.join(QStringLiteral("<br>")).toHtmlEscaped().replace(QStringLiteral("&lt;br&gt;"), QStringLiteral("<br>")), this);
        list->setWordWrap(true);
        layout->addWidget(list);
    }
    auto *pictures = new QHBoxLayout;
    for (const BundlePicture &p : info.content.pictures) {
        QImage image;
        if (!image.loadFromData(p.png, "PNG"))
            continue;
        // A thumbnail that opens the picture at full size.
        auto *thumbnail = new QToolButton(this);
        thumbnail->setObjectName(QStringLiteral("incidentPicture-") + p.view);
        const QImage small = image.scaledToWidth(260, Qt::SmoothTransformation);
        thumbnail->setIcon(QPixmap::fromImage(small));
        thumbnail->setIconSize(small.size());
        thumbnail->setAutoRaise(true);
        thumbnail->setToolTip(tr("%1: click to see it at full size (%2×%3)").arg(p.view).arg(image.width()).arg(image.height()));
        const int index = int(m_pictures.size());
        connect(thumbnail, &QToolButton::clicked, this, [this, index] { showPicture(index); });
        pictures->addWidget(thumbnail);
        m_pictures.push_back(std::move(image));
        m_pictureViews << p.view;
        m_pictureCount++;
    }
    layout->addLayout(pictures);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

void IncidentInfoDialog::showPicture(int index)
{
    if (index < 0 || size_t(index) >= m_pictures.size())
        return;
    auto *viewer = new QDialog(this);
    viewer->setObjectName(QStringLiteral("incidentPictureViewer"));
    viewer->setAttribute(Qt::WA_DeleteOnClose);
    viewer->setWindowTitle(tr("Incident picture: %1").arg(m_pictureViews.value(index)));
    auto *label = new QLabel(viewer);
    label->setObjectName(QStringLiteral("incidentPictureFull"));
    label->setPixmap(QPixmap::fromImage(m_pictures[size_t(index)]));
    auto *scroll = new QScrollArea(viewer);
    scroll->setWidget(label);
    auto *layout = new QVBoxLayout(viewer);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
    // As large as the picture, within the screen.
    QSize size = m_pictures[size_t(index)].size() + QSize(24, 24);
    if (const QScreen *screen = this->screen())
        size = size.boundedTo(screen->availableGeometry().size() * 9 / 10);
    viewer->resize(size);
    viewer->show();
}

} // namespace mapi::ui
