#include "panels/InspectorPanel.h"

#include "common/TableSetup.h"
#include "common/TimeText.h"
#include "map/Federation.h"
#include "map/PayloadConventions.h"
#include "model/CausalChains.h"
#include "model/ItemJson.h"
#include "models/ActionModel.h"
#include "session/InspectorSession.h"
#include "style/Colors.h"
#include "trace/Trace.h"

#include <QCheckBox>
#include <QClipboard>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <optional>

namespace mapi::ui {

int inspectorRowKey(const QString &key, size_t end, size_t first)
{
    bool ok = false;
    const int row = key.toInt(&ok);
    return ok && row >= 0 && size_t(row) >= first && size_t(row) < end ? row : -1;
}

namespace {

using Kind = SelectionHub::Kind;

// Top-level objects and arrays with at most this many children open when an item is first shown.
constexpr int kAutoExpandChildren = 20;

// ---- text building blocks ----------------------------------------------------------------

QString escaped(const QString &s)
{
    return s.toHtmlEscaped();
}

QString coloured(const QColor &color, const QString &plain)
{
    return QStringLiteral("<span style=\"color:%1\">%2</span>").arg(color.name(), escaped(plain));
}

// ---- what one focused item looks like ----------------------------------------------------

struct ItemView
{
    bool found = false;
    QString header;      // rich text
    OrderedJson json;
    bool hasFrame = false;
    QByteArray frame;    // exact frame text (messages, events, problems)
    QString frameNote;
};

ItemView agentView(const SystemStore &store, const Agent &a)
{
    ItemView view;
    view.found = true;
    const QString name = shownName(a);
    QString header = InspectorPanel::tr("<b>Agent %1</b>").arg(escaped(name));
    if (!a.role.isEmpty())
        header += QStringLiteral(" (%1)").arg(escaped(a.role));
    if (!a.state.isEmpty())
        header += QStringLiteral(" · ") + escaped(a.state);
    // Only the dot carries the health colour: the darker ones (stopped) do not read as text on a dark theme.
    header += QStringLiteral(" · ") + coloured(healthColor(a.health), QStringLiteral("●")) + QLatin1Char(' ') + healthName(a.health);
    if (a.placeholder)
        header += InspectorPanel::tr(" · referenced, never described by the server");
    view.header = header;

    view.json = agentJson(store, a);
    return view;
}

ItemView scopeView(const Scope &s)
{
    ItemView view;
    view.found = true;
    view.header = InspectorPanel::tr("<b>Scope %1</b> · %2").arg(escaped(shownName(s)),
                                                                   s.members.size() == 1 ? InspectorPanel::tr("1 member")
                                                                                         : InspectorPanel::tr("%1 members").arg(s.members.size()));
    if (s.deleted)
        view.header += InspectorPanel::tr(" · deleted");
    view.json = scopeJson(s);
    return view;
}

ItemView taskView(const SystemStore &store, const Task &t)
{
    ItemView view;
    view.found = true;
    view.header = InspectorPanel::tr("<b>Task %1</b>").arg(escaped(t.id));
    if (!t.type.isEmpty())
        view.header += QStringLiteral(" (%1)").arg(escaped(t.type));
    view.header += QStringLiteral(" · ") + escaped(t.status);
    if (!t.assigneeId.isEmpty())
        view.header += QStringLiteral(" · ") + escaped(store.agentName(t.assigneeId));
    view.json = taskJson(store, t);
    return view;
}

ItemView actionView(const SystemStore &store, const OperatorAction &a)
{
    ItemView view;
    view.found = true;
    QColor statusColour = ActionModel::statusColor(a.status);
    if (!statusColour.isValid())
        statusColour = QGuiApplication::palette().color(QPalette::Text); // still in flight
    view.header = InspectorPanel::tr("<b>Action %1</b> → %2 · %3")
                      .arg(escaped(actionKindName(a.kind)), escaped(store.agentName(a.agentId)),
                           coloured(statusColour, actionStatusName(a.status)));
    if (a.fallback)
        view.header += InspectorPanel::tr(" · fallback");
    view.json = actionJson(store, a);
    return view;
}

void attachEventFrame(ItemView &view, const QByteArray &frame)
{
    view.hasFrame = true;
    view.frame = frame;
    if (frame.isEmpty())
        view.frameNote = InspectorPanel::tr("No frame text for this event: it arrived in a replayed batch, or the trace "
                                            "it comes from is still loading.");
}

// "crossed from system B" / "crossed to system B" (federation, map/Federation.h); "" within the
// system. The hops between gateways never reach a MAP client (map-extensions.md §2.4).
QString crossedSystems(const Message &m)
{
    const Crossing c = messageCrossing(m.fromAgentId.isEmpty() ? m.fromRaw : m.fromAgentId, m.toAgentIds);
    return c.system.isEmpty() ? QString()
                              : (c.inbound ? InspectorPanel::tr("crossed from system %1") : InspectorPanel::tr("crossed to system %1")).arg(c.system);
}

ItemView messageView(const SystemStore &store, int row)
{
    ItemView view;
    const Message &m = store.messages()[size_t(row)];
    view.found = true;
    const QString from = m.fromAgentId.isEmpty() ? m.fromRaw : store.agentName(m.fromAgentId);
    constexpr int kNamedRecipients = 3; // a broadcast names the first few, then counts the rest
    QStringList to;
    for (const QString &id : m.toAgentIds.mid(0, kNamedRecipients))
        to << store.agentName(id);
    if (const qint64 more = m.toAgentIds.size() - kNamedRecipients + m.recipientsNotKept; more > 0 && !to.isEmpty())
        to << InspectorPanel::tr("%1 more").arg(more);
    view.header = InspectorPanel::tr("<b>Message</b> %1 → %2").arg(escaped(from), escaped(to.isEmpty() ? m.toDisplay : to.join(QStringLiteral(", "))));
    if (m.convention != ConventionKind::None)
        view.header += QStringLiteral(" · ") + escaped(conventionName(m.convention));
    view.header += QStringLiteral(" · ") + escaped(m.status);
    if (const QString crossed = crossedSystems(m); !crossed.isEmpty()) // federation (map/Federation.h)
        view.header += QStringLiteral(" · ") + escaped(crossed);

    int originRow = -1;
    QByteArray originFrame;
    view.json = messageJson(store, row, &originRow, &originFrame);
    if (originRow >= 0) {
        attachEventFrame(view, originFrame);
    } else {
        view.hasFrame = true;
        view.frameNote = InspectorPanel::tr("The event that carried this message is not in the model.");
    }
    return view;
}

ItemView eventView(const SystemStore &store, int row)
{
    ItemView view;
    const EventEntry &e = store.events()[size_t(row)];
    const QString &type = store.events().type(e);
    const QString &agentId = store.events().agentId(e);
    view.found = true;
    view.header = InspectorPanel::tr("<b>Event</b> %1").arg(escaped(type));
    if (!agentId.isEmpty())
        view.header += QStringLiteral(" · ") + escaped(store.agentName(agentId));
    view.header += QStringLiteral(" · ") + timeOfDay(e.timestampMs, TimePrecision::Milliseconds);
    const QByteArray frame = store.eventFrame(row);
    view.json = eventJson(store, row, frame);
    attachEventFrame(view, frame);
    return view;
}

ItemView problemView(int row, const ProtocolProblem &p)
{
    ItemView view;
    view.found = true;
    const bool truncated = p.frame.size() >= ProtocolProblem::kMaxKeptProblemBytes;
    view.header = InspectorPanel::tr("<b>Problem</b> %1 · %2 · %3")
                      .arg(coloured(healthColor(Health::Failed), problemKindName(p.kind)), timeOfDay(p.timeMs, TimePrecision::Milliseconds, Clock::Local),
                           truncated ? InspectorPanel::tr("frame ≥ %1 bytes").arg(p.frame.size())
                                     : InspectorPanel::tr("frame %1 bytes").arg(p.frame.size()));
    if (!p.detail.isEmpty())
        view.header += QStringLiteral("<br>") + escaped(p.detail);
    view.json = problemJson(row, p);
    view.hasFrame = true;
    view.frame = p.frame;
    if (truncated)
        view.frameNote = InspectorPanel::tr("Truncated: only the first %1 KiB of the frame were kept.")
                             .arg(ProtocolProblem::kMaxKeptProblemBytes / 1024);
    else if (p.frame.isEmpty())
        view.frameNote = InspectorPanel::tr("No frame text was kept for this problem.");
    return view;
}


ItemView describe(const SystemStore &store, Kind kind, const QString &key)
{
    switch (kind) {
    case Kind::Agent:
        if (const Agent *a = store.agent(key))
            return agentView(store, *a);
        break;
    case Kind::Scope:
        if (const Scope *s = store.scope(key))
            return scopeView(*s);
        break;
    case Kind::Task:
        if (const Task *t = store.task(key))
            return taskView(store, *t);
        break;
    case Kind::Action:
        if (const OperatorAction *a = store.action(key))
            return actionView(store, *a);
        break;
    case Kind::Message:
        if (const int row = inspectorRowKey(key, store.messages().size(), store.messages().firstRow()); row >= 0)
            return messageView(store, row);
        break;
    case Kind::Event:
        if (const int row = inspectorRowKey(key, store.events().size(), store.events().firstRow()); row >= 0)
            return eventView(store, row);
        break;
    case Kind::Problem:
        if (const int number = inspectorRowKey(key, store.problems().size() + size_t(store.problemsDropped()),
                                      size_t(store.problemsDropped()));
            number >= 0)
            return problemView(number, store.problems()[size_t(number - store.problemsDropped())]);
        break;
    case Kind::None: break;
    }
    return {};
}

QString missingText(Kind kind, const QString &key)
{
    switch (kind) {
    case Kind::None: break;
    case Kind::Agent: return InspectorPanel::tr("Agent %1 is not in the model.").arg(key);
    case Kind::Scope: return InspectorPanel::tr("Scope %1 is not in the model.").arg(key);
    case Kind::Task: return InspectorPanel::tr("Task %1 is not in the model.").arg(key);
    case Kind::Action: return InspectorPanel::tr("Action %1 is not in the model.").arg(key);
    case Kind::Message: return InspectorPanel::tr("Message #%1 is not in the model (a live session's oldest history is trimmed: see the timeline).").arg(key);
    case Kind::Event: return InspectorPanel::tr("Event #%1 is not in the model (a live session's oldest history is trimmed: see the timeline).").arg(key);
    case Kind::Problem: return InspectorPanel::tr("Problem #%1 is not in the model.").arg(key);
    }
    return InspectorPanel::tr("Select an agent, message, task or action to inspect it.");
}

// Row of an element of one of the store's vectors (rows are stable: nothing is ever removed).
template<typename T>
int rowOf(const std::vector<T> &rows, const T *item)
{
    return item ? int(item - rows.data()) : -1;
}

} // namespace

InspectorPanel::InspectorPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_store(session->store())
{
    m_pages = new QStackedWidget(this);
    m_hint = new QLabel(this);
    m_hint->setObjectName(QStringLiteral("inspectorHint"));
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setWordWrap(true);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_hint->setMargin(12);
    m_pages->addWidget(m_hint);

    m_content = new QWidget(this);
    m_header = new QLabel(m_content);
    m_header->setObjectName(QStringLiteral("inspectorHeader"));
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_twin = new QToolButton(m_content);
    m_twin->setObjectName(QStringLiteral("twinButton"));
    m_twin->setVisible(false);
    m_copyJson = new QPushButton(tr("Copy JSON"), m_content);
    m_copyJson->setObjectName(QStringLiteral("copyJsonButton"));
    m_copyJson->setToolTip(tr("Copy the item as pretty-printed JSON"));
    m_copyRaw = new QPushButton(tr("Copy raw"), m_content);
    m_copyRaw->setObjectName(QStringLiteral("copyRawButton"));
    m_copyRaw->setToolTip(tr("Copy the raw tab's text: the frame exactly as received (or pretty-printed when \"Pretty\" is on)"));

    m_model = new JsonTreeModel(this);
    m_tree = new QTreeView(m_content);
    m_tree->setObjectName(QStringLiteral("inspectorTree"));
    m_tree->setModel(m_model);
    setUpReadOnlyTree(m_tree, QAbstractItemView::SingleSelection);
    m_tree->setAllColumnsShowFocus(true);
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(JsonTreeModel::KeyColumn, QHeaderView::Interactive);
    m_tree->header()->setSectionResizeMode(JsonTreeModel::ValueColumn, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(JsonTreeModel::TypeColumn, QHeaderView::Interactive);
    m_tree->header()->resizeSection(JsonTreeModel::KeyColumn, fontMetrics().horizontalAdvance(QLatin1Char('m')) * 14);
    m_tree->header()->resizeSection(JsonTreeModel::TypeColumn, fontMetrics().horizontalAdvance(QStringLiteral("boolean")) + 24);
    m_tree->installEventFilter(this);
    connect(m_tree, &QWidget::customContextMenuRequested, this, &InspectorPanel::showTreeMenu);

    auto *rawPage = new QWidget(m_content);
    m_pretty = new QCheckBox(tr("Pretty"), rawPage);
    m_pretty->setObjectName(QStringLiteral("prettyToggle"));
    m_pretty->setToolTip(tr("Show the frame indented instead of exactly as received"));
    m_rawNote = new QLabel(rawPage);
    m_rawNote->setObjectName(QStringLiteral("rawNote"));
    m_rawNote->setWordWrap(true);
    m_rawNote->setForegroundRole(QPalette::PlaceholderText);
    m_raw = new QPlainTextEdit(rawPage);
    m_raw->setObjectName(QStringLiteral("inspectorRaw"));
    m_raw->setReadOnly(true);
    m_raw->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    // Wrap anywhere: frames are compact JSON with few spaces, and word-boundary wrapping of a long
    // line without any is quadratic in Qt's text layout (seconds for 128 Ki characters).
    m_raw->setWordWrapMode(QTextOption::WrapAnywhere);
    auto *rawBar = new QHBoxLayout;
    rawBar->addWidget(m_pretty);
    rawBar->addWidget(m_rawNote, 1);
    auto *rawLayout = new QVBoxLayout(rawPage);
    rawLayout->setContentsMargins(0, 4, 0, 0);
    rawLayout->addLayout(rawBar);
    rawLayout->addWidget(m_raw, 1);

    m_tabs = new QTabWidget(m_content);
    m_tabs->setObjectName(QStringLiteral("inspectorTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_tree, tr("Tree"));
    m_tabs->addTab(rawPage, tr("Raw"));

    auto *chainPage = new QWidget(m_content);
    m_chainNote = new QLabel(chainPage);
    m_chainNote->setObjectName(QStringLiteral("chainNote"));
    m_chainNote->setWordWrap(true);
    m_chainNote->setForegroundRole(QPalette::PlaceholderText);
    m_chainTree = new QTreeWidget(chainPage);
    m_chainTree->setObjectName(QStringLiteral("chainTree"));
    m_chainTree->setColumnCount(3);
    m_chainTree->setHeaderLabels({tr("Message"), tr("Time"), tr("Link")});
    m_chainTree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_chainTree->setRootIsDecorated(true);
    m_chainTree->setUniformRowHeights(true);
    m_chainTree->setToolTip(tr("Enter or double-click: inspect that message. Alt+Up/Down: its cause, its first effect; "
                               "Alt+Left/Right: the other effects of the same cause"));
    auto *chainLayout = new QVBoxLayout(chainPage);
    chainLayout->setContentsMargins(0, 4, 0, 0);
    chainLayout->addWidget(m_chainNote);
    chainLayout->addWidget(m_chainTree, 1);
    m_tabs->addTab(chainPage, tr("Chain"));
    m_chains = std::make_unique<CausalChains>(*session->store());
    m_chainTimer = new QTimer(this);
    m_chainTimer->setInterval(0); // slices back to back, with the event loop running in between
    connect(m_chainTimer, &QTimer::timeout, this, [this] {
        if (m_chains->update(kChainSliceRows)) {
            m_chainTimer->stop();
            refreshChain();
        } else {
            m_chainNote->setText(tr("Finding causal links: %1 messages to go…").arg(m_chains->pending()));
        }
    });
    connect(m_chainTree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        if (const QVariant event = item->data(0, Qt::UserRole + 1); event.isValid()) {
            const int row = event.toInt();
            QMetaObject::invokeMethod(this, [this, row] { m_selection->focus(Kind::Event, QString::number(row), this); },
                                      Qt::QueuedConnection);
            return;
        }
        const int row = item->data(0, Qt::UserRole).toInt();
        // Queued: focusing rebuilds this tree, which must not happen inside its own signal.
        if (item->data(0, Qt::UserRole).isValid() && row >= 0)
            QMetaObject::invokeMethod(this, [this, row] { m_selection->focus(Kind::Message, QString::number(row), this); },
                                      Qt::QueuedConnection);
    });

    auto *headerRow = new QHBoxLayout;
    headerRow->addWidget(m_header, 1);
    headerRow->addWidget(m_twin, 0, Qt::AlignTop);
    headerRow->addWidget(m_copyJson, 0, Qt::AlignTop);
    headerRow->addWidget(m_copyRaw, 0, Qt::AlignTop);
    auto *contentLayout = new QVBoxLayout(m_content);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addLayout(headerRow);
    contentLayout->addWidget(m_tabs, 1);
    m_pages->addWidget(m_content);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_pages);

    connect(m_copyJson, &QPushButton::clicked, this, [this] { QGuiApplication::clipboard()->setText(jsonText()); });
    connect(m_copyRaw, &QPushButton::clicked, this, [this] { QGuiApplication::clipboard()->setText(m_rawText); });
    connect(m_pretty, &QCheckBox::toggled, this, &InspectorPanel::showRawText);
    connect(m_selection, &SelectionHub::focusChanged, this,
            [this](SelectionHub::Kind kind, const QString &key) { showItem(kind, key); });
    connect(m_store, &SystemStore::changed, this, &InspectorPanel::onStoreChanged);
    connect(m_store, &SystemStore::wasReset, this, [this] {
        m_chains->reset();
        m_taskChainKey.clear();
        refresh();
    });

    showItem(m_selection->focusKind(), m_selection->focusKey());
}

InspectorPanel::~InspectorPanel() = default;

void InspectorPanel::showItem(SelectionHub::Kind kind, const QString &key)
{
    m_taskChainKey.clear(); // looked up again for the new focus
    m_kind = kind;
    m_key = key;
    refresh(); // a focus change is one click: rebuilt at once, visible or not
}

void InspectorPanel::onStoreChanged(const ChangeSet &changes)
{
    // New messages may extend the shown chain: refreshed at most twice a second, while the
    // Chain tab is the one shown.
    if (changes.firstNewEvent >= 0 && isVisible() && !m_chainRefreshQueued && m_tabs->currentIndex() == m_tabs->count() - 1
        && (chainMessageRow() >= 0 || m_kind == Kind::Event)) {
        m_chainRefreshQueued = true;
        QTimer::singleShot(500, this, [this] {
            m_chainRefreshQueued = false;
            refreshChain();
        });
    }
    if (!concernsShownItem(changes))
        return;
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    refresh();
}

bool InspectorPanel::concernsShownItem(const ChangeSet &changes) const
{
    if (m_kind == Kind::None)
        return false;
    if (!m_found)
        return true; // it may have arrived; looking it up is one hash or bounds check
    switch (m_kind) {
    case Kind::Agent: {
        const int row = m_store->agentRow(m_key);
        return changes.agentRows.contains(row) || changes.activeAgentRows.contains(row);
    }
    case Kind::Scope: return changes.scopeRows.contains(m_store->scopeRow(m_key));
    case Kind::Task: return changes.taskRows.contains(rowOf(m_store->tasks(), m_store->task(m_key)));
    case Kind::Action: return changes.actionRows.contains(rowOf(m_store->actions(), m_store->action(m_key)));
    case Kind::Message: {
        if (changes.firstNewEvent < 0)
            return false;
        const int row = m_key.toInt();
        const auto &events = m_store->events();
        for (size_t i = std::max(size_t(changes.firstNewEvent), events.firstRow()); i < events.size(); ++i)
            if (events[i].messageIndex() == row)
                return true;
        return false;
    }
    case Kind::Event:
    case Kind::Problem:
    case Kind::None: return false; // never change once recorded
    }
    return false;
}

void InspectorPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

void InspectorPanel::refresh()
{
    m_stale = false;
    ItemView view = describe(*m_store, m_kind, m_key);
    m_found = view.found;
    if (!view.found) {
        m_hint->setText(missingText(m_kind, m_key));
        m_pages->setCurrentWidget(m_hint);
        if (m_shownKind != Kind::None)
            m_model->clear(); // once: a missing item is looked up again on every store change
        m_shownKind = Kind::None;
        m_shownKey.clear();
        m_hasFrame = false;
        m_frame.clear();
        m_rawText.clear();
        m_rawShown.clear();
        m_raw->clear();
        refreshChain();
        return;
    }

    // Secrets: the store holds none, but nothing reaches the screen or the clipboard unfiltered.
    // Names and values count (a "Bearer …" in a log line), so the whole text is checked; the
    // check is a scan for hints first, and this runs when the item changes, not per repaint.
    {
        const QByteArray compact = QByteArray::fromStdString(view.json.dump(-1, ' ', false, OrderedJson::error_handler_t::replace));
        const QByteArray redacted = redactSecrets(compact);
        if (redacted != compact)
            view.json = OrderedJson::parse(redacted.constBegin(), redacted.constEnd(), nullptr, false);
    }
    m_hasFrame = view.hasFrame;
    m_frame = redactSecrets(view.frame);
    m_frameNote = view.frameNote;

    m_header->setText(view.header);
    m_pages->setCurrentWidget(m_content);
    const bool sameItem = m_shownKind == m_kind && m_shownKey == m_key;
    if (m_shownKind != m_kind)
        m_model->clear(); // different shapes: nothing worth keeping
    // Same kind: merged, so nodes both items have (metadata, payload, …) stay open as they were.
    if (!sameItem || view.json != m_model->json()) {
        m_model->setJson(std::move(view.json));
        if (!sameItem)
            expandSmallTopLevelNodes();
    }
    m_shownKind = m_kind;
    m_shownKey = m_key;
    showRawText();
    refreshChain();
    if (!sameItem) // not at every change of a busy agent: the window refreshes them when systems or agents change
        refreshTwins();
}

void InspectorPanel::setTwinLookup(TwinLookup lookup)
{
    m_twinLookup = std::move(lookup);
    refreshTwins();
}

void InspectorPanel::refreshTwins()
{
    const QStringList systems = m_twinLookup && m_found && m_kind == Kind::Agent ? m_twinLookup(m_key) : QStringList();
    if (systems == m_twinSystems && m_key == m_twinAgent)
        return; // the same offer: an open menu stays open
    m_twinSystems = systems;
    m_twinAgent = m_key;
    if (QMenu *old = m_twin->menu()) {
        m_twin->setMenu(nullptr);
        old->deleteLater(); // it may be the one whose action is being handled
    }
    disconnect(m_twin, &QToolButton::clicked, this, nullptr);
    m_twin->setVisible(!systems.isEmpty());
    if (systems.isEmpty())
        return;
    const QString agent = m_key;
    m_twin->setToolTip(tr("The same agent in %1, open in this window (federated: one system lists the other's agent "
                          "by its id there)").arg(systems.join(QStringLiteral(", "))));
    if (systems.size() == 1) {
        // Short: the header beside it says what the agent is; the tooltip names the system whole.
        const int room = 14 * m_twin->fontMetrics().horizontalAdvance(QLatin1Char('m'));
        m_twin->setText(tr("Show in %1").arg(m_twin->fontMetrics().elidedText(systems.first(), Qt::ElideRight, room)));
        m_twin->setPopupMode(QToolButton::DelayedPopup);
        connect(m_twin, &QToolButton::clicked, this, [this, agent, system = systems.first()] { Q_EMIT twinRequested(agent, system); });
        return;
    }
    m_twin->setText(tr("Show in…"));
    auto *menu = new QMenu(m_twin);
    for (const QString &system : systems)
        menu->addAction(system, this, [this, agent, system] { Q_EMIT twinRequested(agent, system); });
    m_twin->setMenu(menu);
    m_twin->setPopupMode(QToolButton::InstantPopup);
}

void InspectorPanel::expandSmallTopLevelNodes()
{
    for (int row = 0; row < m_model->rowCount(); ++row) {
        const QModelIndex index = m_model->index(row, 0);
        const int children = m_model->rowCount(index);
        if (children > 0 && children <= kAutoExpandChildren)
            m_tree->expand(index);
    }
}

void InspectorPanel::showRawText()
{
    QStringList notes;
    m_pretty->setEnabled(m_hasFrame);
    if (!m_hasFrame) {
        m_rawText = jsonText(); // built from the model: there is no exact text, only this JSON
    } else {
        bool hadEscapes = false;
        std::optional<OrderedJson> parsed;
        if (m_pretty->isChecked())
            parsed = parseFrame(m_frame);
        if (parsed) {
            m_rawText = QString::fromStdString(parsed->dump(2, ' ', false, OrderedJson::error_handler_t::replace));
        } else {
            m_rawText = frameText(m_frame, &hadEscapes);
            if (m_pretty->isChecked() && !m_frame.isEmpty())
                notes << tr("Not JSON (or too large to indent): shown as received.");
        }
        if (hadEscapes)
            notes << tr("Bytes that are not UTF-8 text are shown as \\xNN.");
        if (!m_frameNote.isEmpty())
            notes << m_frameNote;
    }
    QString shown = m_rawText;
    if (shown.size() > kMaxShownRawChars) {
        shown.truncate(kMaxShownRawChars);
        notes << tr("Showing the first %1 of %2 characters; \"Copy raw\" copies all of them.")
                     .arg(kMaxShownRawChars)
                     .arg(m_rawText.size());
    }
    m_rawNote->setText(notes.join(QLatin1Char(' ')));
    m_rawNote->setVisible(!notes.isEmpty());
    if (shown != m_rawShown) {
        const int scroll = m_raw->verticalScrollBar()->value();
        m_raw->setPlainText(shown);
        m_raw->verticalScrollBar()->setValue(scroll);
        m_rawShown = shown;
    }
}

QString InspectorPanel::jsonText() const
{
    return QString::fromStdString(m_model->json().dump(2, ' ', false, OrderedJson::error_handler_t::replace));
}

bool InspectorPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_tree && event->type() == QEvent::KeyPress
        && static_cast<QKeyEvent *>(event)->matches(QKeySequence::Copy)) {
        copySelectedValue();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void InspectorPanel::copySelectedValue()
{
    const QModelIndex current = m_tree->currentIndex();
    if (current.isValid())
        QGuiApplication::clipboard()->setText(current.data(JsonTreeModel::CopyTextRole).toString());
}

void InspectorPanel::copySelectedPath()
{
    const QModelIndex current = m_tree->currentIndex();
    if (current.isValid())
        QGuiApplication::clipboard()->setText(current.data(JsonTreeModel::PathRole).toString());
}

void InspectorPanel::showTreeMenu(const QPoint &pos)
{
    const QModelIndex index = m_tree->indexAt(pos);
    if (!index.isValid())
        return;
    m_tree->setCurrentIndex(index);
    QMenu menu(this);
    QAction *copyValue = menu.addAction(tr("Copy value"), this, &InspectorPanel::copySelectedValue);
    copyValue->setShortcut(QKeySequence::Copy);
    menu.addAction(tr("Copy path"), this, &InspectorPanel::copySelectedPath);
    menu.addSeparator();
    menu.addAction(tr("Expand all below"), this, [this, index] { m_tree->expandRecursively(index.siblingAtColumn(0)); });
    menu.addAction(tr("Collapse all"), m_tree, &QTreeView::collapseAll);
    menu.exec(m_tree->viewport()->mapToGlobal(pos));
}

} // namespace mapi::ui
