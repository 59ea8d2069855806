#include "panels/AgentWorkPanel.h"

#include "panels/AcpView.h"

#include "common/TableSetup.h"
#include "models/AgentWorkModels.h"
#include "models/JsonTreeModel.h"
#include "panels/ConversationsPanel.h"
#include "session/InspectorSession.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <memory>

namespace mapi::ui {

namespace {

// The session words a refused read as "message (code)" (SessionReads.cpp): -32601 is a server
// without the method.
bool isMethodNotFound(const QString &error)
{
    return error.endsWith(QLatin1String("(-32601)"));
}

} // namespace

AgentWorkPanel::AgentWorkPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
{
    m_title = textLabel("agentWorkTitle", Qt::RichText, this);
    m_title->setWordWrap(true);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("agentWorkTabs"));
    m_tabs->addTab(buildCheckpointsTab(), tr("Checkpoints"));
    m_filesTab = m_tabs->addTab(buildFilesTab(), tr("Files"));
    m_acp = new AcpView(session, selection, m_tabs);
    m_tabs->addTab(m_acp, tr("ACP sessions"));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(m_title);
    layout->addWidget(m_tabs, 1);

    connect(m_selection, &SelectionHub::agentSelectionChanged, this, [this](const QStringList &ids) {
        if (!ids.isEmpty()) // an empty selection keeps the agent shown (and what was fetched)
            setAgentId(ids.first());
    });
    connect(m_selection, &SelectionHub::focusChanged, this, [this](SelectionHub::Kind kind, const QString &key) {
        if (kind == SelectionHub::Kind::Agent)
            setAgentId(key);
        else if (kind == SelectionHub::Kind::Event)
            showCheckpointOfEvent(key.toInt());
    });
    SystemStore *store = session->store();
    connect(store, &SystemStore::changed, this, &AgentWorkPanel::onStoreChanged);
    connect(store, &SystemStore::wasReset, this, [this] {
        cancelAllReads(); // a new connection or trace: what was fetched belongs to the last one
        showAfresh();
        updateAvailability();
    });
    const auto liveStateChanged = [this] {
        updateFetchState();
        updateFilesState();
    };
    connect(session, &InspectorSession::sourceChanged, this, liveStateChanged);
    connect(session, &InspectorSession::timeTravelChanged, this, liveStateChanged);
    connect(session, &InspectorSession::supportChanged, this, [this] {
        updateFetchState();
        updateAvailability();
    });

    m_available = !store->checkpoints().checkpoints().empty() || session->support(QStringLiteral("trajectory/list")) == Support::Present
        || store->connection().workspace;
    const QString selected = m_selection->selectedAgents().value(0);
    const QString focused = m_selection->focusKind() == SelectionHub::Kind::Agent ? m_selection->focusKey() : QString();
    m_agentId = selected.isEmpty() ? focused : selected;
    m_checkpoints->setAgentId(m_agentId);
    updateTitle();
    updateCheckpointSummary();
    updateFetchState();
    updateFilesState();
}

AgentWorkPanel::~AgentWorkPanel()
{
    cancelAllReads();
}

QWidget *AgentWorkPanel::buildCheckpointsTab()
{
    auto *page = new QWidget(this);
    m_checkpoints = new CheckpointModel(m_session->store(), this);
    m_checkpointSummary = selectableLabel("checkpointSummary", Qt::PlainText, page);

    m_checkpointTable = readOnlyTable("checkpointsTable", m_checkpoints, CheckpointModel::MetadataColumn, page);
    sizeColumnsFor(m_checkpointTable->horizontalHeader(), fontMetrics(),
                   {{CheckpointModel::TimeColumn, QStringLiteral("00:00:00.000")},
                    {CheckpointModel::LabelColumn, QStringLiteral("Parsed the incident log, part 2")},
                    {CheckpointModel::WorkSessionColumn, QStringLiteral("claude-session-7f3a")}});

    m_fetch = new QPushButton(tr("Fetch content"), page);
    m_fetch->setObjectName(QStringLiteral("fetchCheckpointContent"));
    m_fetch->setToolTip(tr("Asks the server for the checkpoint's content (trajectory/content); double-clicking a checkpoint does too"));
    m_fetching = new QWidget(page);
    m_fetching->setObjectName(QStringLiteral("checkpointFetching"));
    auto *fetchingLayout = new QHBoxLayout(m_fetching);
    fetchingLayout->setContentsMargins(0, 0, 0, 0);
    fetchingLayout->addWidget(new QLabel(tr("Fetching…"), m_fetching));
    auto *cancel = new QPushButton(tr("Cancel"), m_fetching);
    cancel->setObjectName(QStringLiteral("cancelCheckpointFetch"));
    fetchingLayout->addWidget(cancel);
    m_fetching->hide();
    auto *fetchRow = new QHBoxLayout;
    fetchRow->addWidget(m_fetch);
    fetchRow->addWidget(m_fetching);
    fetchRow->addStretch(1);
    m_fetchReason = selectableLabel("checkpointFetchReason", Qt::PlainText, page);
    m_contentStatus = selectableLabel("checkpointContentStatus", Qt::PlainText, page);

    m_contentModel = new JsonTreeModel(this);
    m_contentTree = new QTreeView(page);
    m_contentTree->setObjectName(QStringLiteral("checkpointContentTree"));
    m_contentTree->setModel(m_contentModel);
    setUpReadOnlyTree(m_contentTree, QAbstractItemView::SingleSelection);
    m_contentText = readOnlyText("checkpointContentText",
                                 tr("The readable artifacts (transcripts, prompts) of the fetched content."), page);
    // The files' fixed-width font, but wrapped: transcripts are prose.
    m_contentText->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    QWidget *contentBox = columnBox({fetchRow, m_fetchReason, m_contentStatus},
                                    twoPanes(Qt::Horizontal, m_contentTree, m_contentText, page), page);
    QSplitter *splitter = twoPanes(Qt::Vertical, m_checkpointTable, contentBox, page, 2, 3);

    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_checkpointSummary);
    layout->addWidget(splitter, 1);

    connect(m_checkpointTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &AgentWorkPanel::updateFetchState);
    connect(m_checkpointTable, &QAbstractItemView::doubleClicked, this, &AgentWorkPanel::fetchSelectedContent);
    connect(m_fetch, &QPushButton::clicked, this, &AgentWorkPanel::fetchSelectedContent);
    connect(cancel, &QPushButton::clicked, this, [this] {
        cancelRead(ContentRead);
        cancelStream();
        m_fetching->hide();
        m_contentStatus->setText(tr("Cancelled."));
        updateFetchState();
    });
    connect(m_checkpoints, &QAbstractItemModel::modelReset, this, &AgentWorkPanel::updateFetchState);
    return page;
}

QWidget *AgentWorkPanel::buildFilesTab()
{
    auto *page = new QWidget(this);
    m_files = new WorkspaceFileModel(this);
    m_filesReason = selectableLabel("workspaceReason", Qt::PlainText, page);

    m_path = new QLineEdit(page);
    m_path->setObjectName(QStringLiteral("workspacePath"));
    m_path->setPlaceholderText(tr("Directory (empty: the workspace's root)"));
    m_up = new QPushButton(tr("Up"), page);
    m_up->setObjectName(QStringLiteral("workspaceUp"));
    m_list = new QPushButton(tr("List"), page);
    m_list->setObjectName(QStringLiteral("workspaceList"));
    auto *pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(m_up);
    pathRow->addWidget(m_list);
    m_search = searchBox("workspaceSearch", tr("Search the workspace…"), page);
    m_searchButton = new QPushButton(tr("Search"), page);
    m_searchButton->setObjectName(QStringLiteral("workspaceSearchButton"));
    auto *searchRow = new QHBoxLayout;
    searchRow->addWidget(m_search, 1);
    searchRow->addWidget(m_searchButton);

    m_fileTable = readOnlyTable("workspaceFiles", m_files, WorkspaceFileModel::PathColumn, page);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_fileTable->horizontalHeader()->resizeSection(WorkspaceFileModel::KindColumn, 9 * em);
    m_fileTable->horizontalHeader()->resizeSection(WorkspaceFileModel::SizeColumn, 6 * em);
    m_fileHeader = selectableLabel("workspaceFileHeader", Qt::RichText, page);
    m_fileText = readOnlyText("workspaceFileText", tr("Double-click a file to read it (read-only)."), page);
    m_fileText->setLineWrapMode(QPlainTextEdit::NoWrap); // a file's lines as they are
    m_fileText->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    QWidget *fileBox = columnBox({m_fileHeader}, m_fileText, page);
    QSplitter *splitter = twoPanes(Qt::Horizontal, m_fileTable, fileBox, page, 2, 3);
    m_filesStatus = selectableLabel("workspaceStatus", Qt::PlainText, page);

    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_filesReason);
    layout->addLayout(pathRow);
    layout->addLayout(searchRow);
    layout->addWidget(splitter, 1);
    layout->addWidget(m_filesStatus);

    connect(m_list, &QPushButton::clicked, this, &AgentWorkPanel::listDirectory);
    connect(m_path, &QLineEdit::returnPressed, this, &AgentWorkPanel::listDirectory);
    connect(m_up, &QPushButton::clicked, this, [this] {
        QString path = m_path->text().trimmed();
        while (path.endsWith(QLatin1Char('/')))
            path.chop(1);
        const qsizetype slash = path.lastIndexOf(QLatin1Char('/'));
        m_path->setText(slash < 0 ? QString() : path.left(slash));
        listDirectory();
    });
    connect(m_searchButton, &QPushButton::clicked, this, &AgentWorkPanel::searchFiles);
    connect(m_search, &QLineEdit::returnPressed, this, &AgentWorkPanel::searchFiles);
    connect(m_fileTable, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex &index) { openFileRow(index.row()); });
    return page;
}

void AgentWorkPanel::setAgentId(const QString &agentId)
{
    if (agentId == m_agentId)
        return;
    cancelAllReads(); // answers about the last agent would land under this one
    m_agentId = agentId;
    m_checkpoints->setAgentId(agentId);
    m_acp->setAgentId(agentId);
    showAfresh();
}

void AgentWorkPanel::showAfresh()
{
    clearContent();
    clearFiles();
    updateTitle();
    updateCheckpointSummary();
    updateFetchState();
    updateFilesState();
}

void AgentWorkPanel::onStoreChanged(const ChangeSet &changes)
{
    if (changes.checkpointsChanged) {
        updateCheckpointSummary();
        updateAvailability();
    }
    if (changes.acpChanged)
        updateAvailability();
    if (changes.connectionChanged) {
        updateFilesState();
        updateAvailability();
    }
    if (!m_agentId.isEmpty() && (changes.firstNewAgentRow >= 0 || changes.agentRows.contains(m_session->store()->agentRow(m_agentId))))
        updateTitle(); // renamed, or known at last
}

void AgentWorkPanel::startRead(ReadKind kind, const QString &method, const Json &params, int timeoutMs, ReadDone done)
{
    cancelRead(kind);
    if (!m_session)
        return;
    // The read's id is known once readFromServer returns; the answer comes later (queued), and
    // should it ever come before, it finds no id yet and is taken as this read's.
    struct Pending
    {
        quint64 id = 0;
        bool answered = false;
    };
    auto pending = std::make_shared<Pending>();
    const QPointer<AgentWorkPanel> self(this);
    const quint64 id = m_session->readFromServer(
        method, params,
        [self, kind, pending, done = std::move(done)](bool ok, const Json &result, const QString &error) {
            if (!self || (pending->id != 0 && self->m_reads[size_t(kind)] != pending->id))
                return; // cancelled, replaced by a newer read, or the panel is gone
            pending->answered = true;
            self->m_reads[size_t(kind)] = 0;
            done(ok, result, error);
        },
        timeoutMs);
    if (!pending->answered) {
        pending->id = id;
        m_reads[size_t(kind)] = id;
    }
}

void AgentWorkPanel::cancelRead(ReadKind kind)
{
    quint64 &id = m_reads[size_t(kind)];
    if (id != 0 && m_session)
        m_session->cancelRead(id);
    id = 0;
}

void AgentWorkPanel::cancelAllReads()
{
    for (int kind = 0; kind < ReadKinds; ++kind)
        cancelRead(ReadKind(kind));
    cancelStream();
    if (m_fetching)
        m_fetching->hide();
}

QString AgentWorkPanel::liveReadBlock() const
{
    if (!m_session)
        return tr("not connected");
    switch (m_session->source()) {
    case InspectorSession::Source::Trace: return tr("this is a recording");
    case InspectorSession::Source::None: return tr("not connected");
    case InspectorSession::Source::Live:
        return m_session->isTimeTravelling() ? tr("you are looking at the past (return to live first)") : QString();
    }
    return {};
}

void AgentWorkPanel::updateTitle()
{
    if (m_agentId.isEmpty()) {
        m_title->setText(tr("Select an agent (Agents panel, topology, timeline) to see its checkpoints and its files."));
        return;
    }
    const QString name = m_session->store()->agentName(m_agentId);
    m_title->setText(name == m_agentId ? QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped())
                                       : QStringLiteral("<b>%1</b> (%2)").arg(name.toHtmlEscaped(), m_agentId.toHtmlEscaped()));
}

void AgentWorkPanel::updateAvailability()
{
    const SystemStore &store = *m_session->store();
    const bool available = !store.checkpoints().checkpoints().empty() || !store.acpStreams().streams().empty()
        || m_session->support(QStringLiteral("trajectory/list")) == Support::Present || store.connection().workspace;
    if (available == m_available)
        return;
    m_available = available;
    Q_EMIT availabilityChanged(available);
}

// ---- Checkpoints -------------------------------------------------------------------------

void AgentWorkPanel::updateCheckpointSummary()
{
    if (m_agentId.isEmpty()) {
        m_checkpointSummary->clear();
        return;
    }
    const int count = m_checkpoints->rowCount();
    QString text = count == 0 ? tr("No checkpoints of this agent yet (agents record them with trajectory/checkpoint).")
                              : (count == 1 ? tr("1 checkpoint") : tr("%1 checkpoints").arg(count));
    if (const qint64 dropped = m_session->store()->checkpoints().notKept(); dropped > 0)
        text += QStringLiteral(" · ") + tr("%1 older checkpoint(s) of all agents not kept").arg(dropped);
    m_checkpointSummary->setText(text);
}

QString AgentWorkPanel::fetchBlockReason() const
{
    if (const QString block = liveReadBlock(); !block.isEmpty())
        return tr("content is fetched from a live server; %1").arg(block);
    if (m_session->support(QStringLiteral("trajectory/content")) == Support::Absent)
        return tr("This server does not serve trajectory content");
    return {};
}

void AgentWorkPanel::updateFetchState()
{
    const QString reason = fetchBlockReason();
    const bool selected = m_checkpointTable->selectionModel()->currentIndex().isValid();
    m_fetch->setEnabled(reason.isEmpty() && selected && m_reads[ContentRead] == 0 && m_awaitedStream.isEmpty());
    m_fetchReason->setText(reason);
    m_fetchReason->setVisible(!reason.isEmpty());
}

void AgentWorkPanel::showCheckpointOfEvent(int eventRow)
{
    // A checkpoint's event focused elsewhere (its mark on the timeline): its agent, the
    // checkpoint selected, and its content fetched where a live server can give it.
    const SystemStore &store = *m_session->store();
    for (const Checkpoint &c : store.checkpoints().checkpoints()) {
        if (c.eventRow != eventRow)
            continue;
        setAgentId(c.agentId);
        const int row = m_checkpoints->rowOfCheckpoint(c.id);
        if (row < 0)
            return;
        m_tabs->setCurrentIndex(0);
        m_checkpointTable->selectionModel()->setCurrentIndex(m_checkpoints->index(row, 0),
                                                            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        if (fetchBlockReason().isEmpty())
            fetchSelectedContent();
        return;
    }
}

void AgentWorkPanel::fetchSelectedContent()
{
    const QModelIndex current = m_checkpointTable->selectionModel()->currentIndex();
    if (!current.isValid())
        return;
    if (!fetchBlockReason().isEmpty()) {
        updateFetchState(); // the reason is on show
        return;
    }
    const QString checkpointId = current.data(CheckpointModel::CheckpointIdRole).toString();
    cancelStream(); // another checkpoint's stream is no longer wanted
    clearContent(tr("Fetching the content of checkpoint %1…").arg(checkpointId));
    m_fetching->show();
    startRead(ContentRead, QStringLiteral("trajectory/content"), Json{{"checkpointId", checkpointId.toStdString()}}, kContentTimeoutMs,
              [this, checkpointId](bool ok, const Json &result, const QString &error) {
                  m_fetching->hide();
                  updateFetchState();
                  if (!ok) {
                      clearContent(isMethodNotFound(error) ? tr("This server does not serve trajectory content")
                                                           : tr("Could not fetch the content of checkpoint %1: %2").arg(checkpointId, error));
                      return;
                  }
                  showContent(checkpointId, result);
              });
    updateFetchState();
}

void AgentWorkPanel::showContent(const QString &checkpointId, const Json &result)
{
    const Json *content = jsonChild(result, "content");
    if (!content || !content->is_object()) {
        clearContent(tr("The server's answer for checkpoint %1 holds no content object.").arg(checkpointId));
        m_contentModel->setJson(OrderedJson(result));
        return;
    }
    static const Json kNoArtifacts = Json::object();
    const Json *found = jsonChild(*content, "artifacts");
    const Json &artifacts = found ? *found : kNoArtifacts;
    m_contentModel->setJson(OrderedJson(artifacts));
    const ReadableText readable = readableArtifacts(artifacts, kMaxShownChars);
    m_contentText->setPlainText(readable.text);

    const int count = (artifacts.is_object() || artifacts.is_array()) ? int(artifacts.size()) : 0;
    QStringList status{count == 1 ? tr("Checkpoint %1: 1 artifact").arg(checkpointId) : tr("Checkpoint %1: %2 artifacts").arg(checkpointId).arg(count)};
    if (count > 0 && readable.artifacts == 0)
        status << tr("none reads as text: see the tree");
    if (readable.cut)
        status << tr("the text is cut at %1 (the tree has it whole)").arg(QLocale().formattedDataSize(kMaxShownChars));
    const Json *streaming = jsonChild(*content, "streaming");
    const bool streamed = streaming && streaming->is_boolean() && streaming->get<bool>();
    const QString streamId = jsonString(*content, "streamId");
    const QString streamArtifact = jsonString(*content, "streamArtifact");
    if (streamed) {
        const Json *info = jsonChild(*content, "streamInfo");
        const Json noInfo = Json::object();
        const Json &stream = info && info->is_object() ? *info : noInfo;
        status << tr("artifact %1 is streamed (stream %2): %3 bytes in %4 chunks")
                      .arg(streamArtifact, streamId)
                      .arg(jsonInt(stream, "totalBytes", -1))
                      .arg(jsonInt(stream, "totalChunks", -1));
    }
    m_contentSummary = status.join(QStringLiteral(" · "));
    m_contentStatus->setText(m_contentSummary);
    if (streamed && !streamId.isEmpty())
        awaitStream(streamId, streamArtifact); // last: its answer may come at once
    else if (streamed)
        m_contentStatus->setText(m_contentSummary + QStringLiteral(" · ") + tr("the answer names no stream to receive"));
}

void AgentWorkPanel::awaitStream(const QString &streamId, const QString &artifact)
{
    cancelStream();
    if (!m_session)
        return;
    m_awaitedStream = streamId;
    m_contentStatus->setText(m_contentSummary + QStringLiteral(" · ") + tr("receiving the streamed content…"));
    m_fetching->show();
    updateFetchState();
    const QPointer<AgentWorkPanel> self(this);
    m_session->awaitContentStream(streamId, [self, streamId, artifact](bool ok, const QByteArray &bytes, const QString &error) {
        if (!self || self->m_awaitedStream != streamId)
            return; // cancelled, or another content asked for since
        self->m_awaitedStream.clear();
        self->showStreamedArtifact(artifact, ok, bytes, error);
    });
}

void AgentWorkPanel::cancelStream()
{
    if (!m_awaitedStream.isEmpty() && m_session)
        m_session->cancelStream(m_awaitedStream);
    m_awaitedStream.clear();
}

// The reassembled bytes of a streamed artifact: JSON when they parse as JSON (a transcript),
// else text; into the tree under the artifact's name, and into the text when they read as text.
void AgentWorkPanel::showStreamedArtifact(const QString &artifact, bool ok, const QByteArray &bytes, const QString &error)
{
    m_fetching->hide();
    updateFetchState();
    const QString name = artifact.isEmpty() ? QStringLiteral("streamed") : artifact;
    if (!ok) {
        m_contentStatus->setText(m_contentSummary + QStringLiteral(" · ")
                                 + tr("the streamed %1 did not arrive whole: %2").arg(name, error));
        return;
    }
    // Parsing is for what a person reads through (the tree); larger content stays text.
    constexpr qsizetype kMaxParsedBytes = 4 * 1024 * 1024;
    Json value = bytes.size() <= kMaxParsedBytes ? Json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false)
                                                 : Json(Json::value_t::discarded);
    bool cut = false;
    if (value.is_discarded())
        value = boundedUtf8Text(QByteArrayView(bytes), kMaxShownChars, &cut).toStdString();
    OrderedJson tree = m_contentModel->json().is_object() ? m_contentModel->json() : OrderedJson::object();
    tree[name.toStdString()] = OrderedJson(value);
    m_contentModel->setJson(std::move(tree));

    const QString shown = m_contentText->toPlainText();
    const ReadableText readable = readableArtifacts(Json{{name.toStdString(), value}}, kMaxShownChars - shown.size());
    if (readable.artifacts > 0)
        m_contentText->setPlainText(shown.isEmpty() ? readable.text : QString(shown + QLatin1Char('\n') + readable.text));
    QString status = m_contentSummary + QStringLiteral(" · ")
        + tr("streamed %1 received (%2)").arg(name, QLocale().formattedDataSize(bytes.size()));
    if (cut) // not JSON, or too large to parse: the tree holds the text as shown
        status += QStringLiteral(" · ") + tr("shown up to %1").arg(QLocale().formattedDataSize(kMaxShownChars));
    else if (readable.cut)
        status += QStringLiteral(" · ") + tr("the text is cut at %1 (the tree has it whole)").arg(QLocale().formattedDataSize(kMaxShownChars));
    m_contentStatus->setText(status);
}

void AgentWorkPanel::clearContent(const QString &status)
{
    m_contentModel->clear();
    m_contentText->clear();
    m_contentStatus->setText(status);
}

// ---- Files -------------------------------------------------------------------------------

void AgentWorkPanel::updateFilesState()
{
    const bool served = m_session->store()->connection().workspace;
    const QString absent = tr("This server does not serve workspaces (no capabilities.workspace in map/connect)");
    m_tabs->setTabEnabled(m_filesTab, served);
    m_tabs->setTabToolTip(m_filesTab, served ? tr("The agent's workspace, read-only") : absent);
    QString reason;
    if (!served)
        reason = absent;
    else if (const QString block = liveReadBlock(); !block.isEmpty())
        reason = tr("files are read from a live server; %1").arg(block);
    else if (m_agentId.isEmpty())
        reason = tr("Select an agent to browse its workspace.");
    const bool usable = reason.isEmpty();
    const QList<QWidget *> controls{m_path, m_up, m_list, m_search, m_searchButton};
    for (QWidget *control : controls)
        control->setEnabled(usable);
    m_filesReason->setText(reason);
    m_filesReason->setVisible(!usable);
}

void AgentWorkPanel::listDirectory()
{
    if (!m_list->isEnabled())
        return;
    const QString directory = m_path->text().trimmed();
    Json params{{"agentId", m_agentId.toStdString()}};
    if (!directory.isEmpty())
        params["directory"] = directory.toStdString();
    const QString where = directory.isEmpty() ? tr("the workspace's root") : directory;
    m_filesStatus->setText(tr("Listing %1…").arg(where));
    startRead(ListRead, QStringLiteral("workspace/list"), params, -1, [this, where](bool ok, const Json &result, const QString &error) {
        if (!ok) {
            m_filesStatus->setText(isMethodNotFound(error) ? tr("This server does not serve workspaces")
                                                           : tr("Could not list %1: %2").arg(where, error));
            return;
        }
        const int leftOut = m_files->setFiles(result);
        QString text = tr("%1: %2 entries").arg(where).arg(m_files->rowCount());
        if (leftOut > 0)
            text += QStringLiteral(" · ") + tr("%1 more not shown").arg(leftOut);
        m_filesStatus->setText(text);
    });
}

void AgentWorkPanel::searchFiles()
{
    const QString query = m_search->text().trimmed();
    if (!m_searchButton->isEnabled() || query.isEmpty())
        return;
    m_filesStatus->setText(tr("Searching for “%1”…").arg(query));
    startRead(ListRead, QStringLiteral("workspace/search"), Json{{"agentId", m_agentId.toStdString()}, {"query", query.toStdString()}}, -1,
              [this, query](bool ok, const Json &result, const QString &error) {
                  if (!ok) {
                      m_filesStatus->setText(isMethodNotFound(error) ? tr("This server does not serve workspaces")
                                                                     : tr("Could not search for “%1”: %2").arg(query, error));
                      return;
                  }
                  const int leftOut = m_files->setFiles(result);
                  QString text = tr("%1 file(s) match “%2”").arg(m_files->rowCount()).arg(query);
                  if (leftOut > 0)
                      text += QStringLiteral(" · ") + tr("%1 more not shown").arg(leftOut);
                  m_filesStatus->setText(text);
              });
}

void AgentWorkPanel::openFileRow(int row)
{
    const WorkspaceFile *file = m_files->file(row);
    if (!file || !m_list->isEnabled())
        return;
    if (file->isDirectory) {
        m_path->setText(file->path);
        listDirectory();
    } else {
        readFile(*file);
    }
}

void AgentWorkPanel::readFile(const WorkspaceFile &file)
{
    Json params{{"agentId", m_agentId.toStdString()}, {"path", file.path.toStdString()}};
    // A large file is read in part: what a person reads first, not megabytes through the socket.
    const bool partial = file.size > kPartialReadBytes;
    if (partial)
        params["lineRange"] = Json{{"start", 1}, {"end", kPartialReadLines}};
    m_fileHeader->setText(tr("Reading <b>%1</b>…").arg(file.path.toHtmlEscaped()));
    m_fileText->clear();
    startRead(FileRead, QStringLiteral("workspace/read"), params, -1,
              [this, path = file.path, listedSize = file.size, partial](bool ok, const Json &result, const QString &error) {
                  if (!ok) {
                      m_fileHeader->setText(tr("Could not read <b>%1</b>: %2").arg(path.toHtmlEscaped(), error.toHtmlEscaped()));
                      return;
                  }
                  bool cut = false;
                  const Json *text = jsonChild(result, "text");
                  m_fileText->setPlainText(text ? boundedText(*text, kMaxShownChars, &cut) : QString());
                  QStringList header{QStringLiteral("<b>%1</b>").arg(path.toHtmlEscaped())};
                  const qint64 size = jsonInt(result, "size", listedSize);
                  if (size >= 0)
                      header << QLocale().formattedDataSize(size).toHtmlEscaped();
                  if (const QString mime = jsonString(result, "mime"); !mime.isEmpty())
                      header << mime.toHtmlEscaped();
                  if (partial)
                      header << tr("lines 1–%1 only: the file is over %2")
                                    .arg(kPartialReadLines)
                                    .arg(QLocale().formattedDataSize(kPartialReadBytes).toHtmlEscaped());
                  if (cut)
                      header << tr("cut at %1").arg(QLocale().formattedDataSize(kMaxShownChars).toHtmlEscaped());
                  m_fileHeader->setText(header.join(QStringLiteral(" · ")));
              });
}

void AgentWorkPanel::clearFiles()
{
    m_files->clear();
    m_path->clear();
    m_fileHeader->clear();
    m_fileText->clear();
    m_filesStatus->clear();
}

} // namespace mapi::ui
