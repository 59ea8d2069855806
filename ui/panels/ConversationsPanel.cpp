#include "panels/ConversationsPanel.h"

#include "common/TableSetup.h"
#include "common/TimeText.h"
#include "common/TypingFilter.h"
#include "models/ConversationModels.h"
#include "session/InspectorSession.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace mapi::ui {

namespace {

enum Page { EmptyPage, ContentPage };
constexpr int kThreadTurnRole = Qt::UserRole + 1; // a thread item's root turn id

// "Name (role)" of a participant row, muted and marked when every one of its entries left.
QString participantHtml(const SystemStore::ParticipantRow &p, const QPalette &palette)
{
    QStringList notes;
    if (!p.role.isEmpty())
        notes << p.role.toHtmlEscaped();
    if (p.type == QLatin1String("user"))
        notes << ConversationsPanel::tr("user");
    if (p.leftMs > 0)
        notes << ConversationsPanel::tr("left %1").arg(timeOfDay(p.leftMs));
    QString text = QStringLiteral("<b>%1</b>").arg(p.name.toHtmlEscaped());
    if (!notes.isEmpty())
        text += QStringLiteral(" (%1)").arg(notes.join(QStringLiteral(", ")));
    if (p.leftMs > 0)
        text = QStringLiteral("<span style=\"color:%1\">%2</span>").arg(palette.color(QPalette::PlaceholderText).name(), text);
    return text;
}

// The conversations as the table lists them: sorted by SortRole (numbers and times stay
// numbers), filtered on one column that carries the whole filter text (subject, type, status,
// participant names).
QSortFilterProxyModel *sortedAndFiltered(ConversationListModel *model, QObject *parent)
{
    auto *proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(ConversationListModel::SortRole);
    proxy->setSortCaseSensitivity(Qt::CaseInsensitive);
    proxy->setFilterRole(ConversationListModel::FilterTextRole);
    proxy->setFilterKeyColumn(ConversationListModel::SubjectColumn);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setDynamicSortFilter(true);
    return proxy;
}

// A new `W`, child of `parent`, named for the tests and the style sheets.
template<typename W>
W *named(const char *objectName, QWidget *parent)
{
    auto *widget = new W(parent);
    widget->setObjectName(QLatin1String(objectName));
    return widget;
}

} // namespace

// ---- Widgets the panels build alike (declared in ConversationsPanel.h) ----------------------

QLabel *textLabel(const char *objectName, Qt::TextFormat format, QWidget *parent)
{
    auto *label = named<QLabel>(objectName, parent);
    label->setTextFormat(format);
    return label;
}

QLabel *selectableLabel(const char *objectName, Qt::TextFormat format, QWidget *parent)
{
    QLabel *label = textLabel(objectName, format, parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QLineEdit *searchBox(const char *objectName, const QString &placeholder, QWidget *parent)
{
    auto *box = named<QLineEdit>(objectName, parent);
    box->setPlaceholderText(placeholder);
    box->setClearButtonEnabled(true);
    return box;
}

QPlainTextEdit *readOnlyText(const char *objectName, const QString &placeholder, QWidget *parent)
{
    auto *text = named<QPlainTextEdit>(objectName, parent);
    text->setReadOnly(true);
    text->setPlaceholderText(placeholder);
    return text;
}

QTableView *readOnlyTable(const char *objectName, QAbstractItemModel *model, int stretchColumn, QWidget *parent)
{
    auto *table = named<QTableView>(objectName, parent);
    table->setModel(model);
    setUpReadOnlyTable(table, QAbstractItemView::SingleSelection, stretchColumn);
    return table;
}

void sizeColumnsFor(QHeaderView *header, const QFontMetrics &metrics,
                    std::initializer_list<std::pair<int, QString>> samples)
{
    for (const auto &[column, sample] : samples)
        header->resizeSection(column, metrics.horizontalAdvance(sample) + 16);
}

QWidget *columnBox(std::initializer_list<QObject *> above, QWidget *fill, QWidget *parent)
{
    auto *box = new QWidget(parent);
    auto *column = new QVBoxLayout(box);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    for (QObject *item : above) {
        if (auto *layout = qobject_cast<QLayout *>(item))
            column->addLayout(layout);
        else
            column->addWidget(qobject_cast<QWidget *>(item));
    }
    column->addWidget(fill, 1);
    return box;
}

QSplitter *twoPanes(Qt::Orientation orientation, QWidget *first, QWidget *second, QWidget *parent, int firstShare,
                    int secondShare)
{
    auto *panes = new QSplitter(orientation, parent);
    panes->setChildrenCollapsible(false);
    panes->addWidget(first);
    panes->addWidget(second);
    if (firstShare > 0 || secondShare > 0) {
        panes->setStretchFactor(0, firstShare);
        panes->setStretchFactor(1, secondShare);
    }
    return panes;
}

// ---- ConversationsPanel --------------------------------------------------------------------

ConversationsPanel::ConversationsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_model(new ConversationListModel(session->store(), this))
    , m_proxy(sortedAndFiltered(m_model, this))
    , m_turns(new TurnListModel(session->store(), this))
{
    m_filter = searchBox("conversationFilter", tr("Filter conversations: subject, participant, type, status"), this);
    m_counts = textLabel("conversationCounts", Qt::PlainText, this);
    auto *top = new QHBoxLayout;
    top->addWidget(m_filter, 2);
    top->addWidget(m_counts, 3);

    const QFontMetrics metrics = fontMetrics();
    m_table = readOnlyTable("conversationsTable", m_proxy, ConversationListModel::SubjectColumn, this);
    m_table->setSortingEnabled(true);
    // Like an inbox: the most recently active first. The selection stays with its conversation
    // when a new turn moves it up.
    m_table->sortByColumn(ConversationListModel::LastActivityColumn, Qt::DescendingOrder);
    sizeColumnsFor(m_table->horizontalHeader(), metrics,
                   {{ConversationListModel::TypeColumn, QStringLiteral("multi-agent")},
                    {ConversationListModel::StatusColumn, QStringLiteral("completed · review finished")},
                    {ConversationListModel::ParticipantsColumn, tr("Participants")},
                    {ConversationListModel::TurnsColumn, QStringLiteral("1000 (100 earlier not kept)")},
                    {ConversationListModel::LastActivityColumn, tr("Last activity")}});

    m_header = selectableLabel("conversationHeader", Qt::RichText, this);
    m_participants = selectableLabel("conversationParticipants", Qt::RichText, this);

    m_turnTable = readOnlyTable("turnsTable", m_turns, TurnListModel::TextColumn, this);
    m_turnTable->installEventFilter(this); // Enter opens the turn's event
    QHeaderView *turnHeader = m_turnTable->horizontalHeader();
    turnHeader->moveSection(turnHeader->visualIndex(TurnListModel::NumberColumn), 0); // the turn's number first
    sizeColumnsFor(turnHeader, metrics,
                   {{TurnListModel::NumberColumn, QStringLiteral("0000")},
                    {TurnListModel::TimeColumn, QStringLiteral("00:00:00.000")},
                    {TurnListModel::ParticipantColumn, QStringLiteral("worker-10.sub-10")},
                    {TurnListModel::ThreadColumn, QStringLiteral("repro steps, part 2")},
                    {TurnListModel::ReplyToColumn, QStringLiteral("↩ #0000")},
                    {TurnListModel::ContentTypeColumn, QStringLiteral("data · intercepted (msg-000)")}});

    m_goToAnswered = new QPushButton(tr("Go to the turn it answers"), this);
    m_goToAnswered->setObjectName(QStringLiteral("goToAnsweredTurn"));
    m_goToAnswered->setEnabled(false);
    m_turnText = readOnlyText("turnText", tr("Select a turn to read it whole."), this);
    auto *textButtons = new QHBoxLayout;
    textButtons->addWidget(m_goToAnswered);
    textButtons->addStretch(1);
    QWidget *textBox = columnBox({textButtons}, m_turnText, this);

    m_threads = new QTreeWidget(this);
    m_threads->setObjectName(QStringLiteral("conversationThreads"));
    m_threads->setHeaderLabels({tr("Thread"), tr("Root turn")});
    m_threads->setRootIsDecorated(false);
    m_threads->setUniformRowHeights(true);
    m_threads->setAlternatingRowColors(true);
    m_threads->setToolTip(tr("Double-click a thread to select its root turn"));

    // The selected conversation below the table: its header and participants over its turns,
    // and below those the selected turn's text beside the threads.
    QSplitter *lower = twoPanes(Qt::Horizontal, textBox, m_threads, this, 3, 1);
    QSplitter *turnSplitter = twoPanes(Qt::Vertical, m_turnTable, lower, this, 3, 2);
    QWidget *detailBox = columnBox({m_header, m_participants}, turnSplitter, this);
    QSplitter *splitter = twoPanes(Qt::Vertical, m_table, detailBox, this, 2, 3);

    m_emptyText = textLabel("conversationsEmpty", Qt::PlainText, this);
    m_emptyText->setAlignment(Qt::AlignCenter);
    m_emptyText->setWordWrap(true);
    m_pages = new QStackedWidget(this);
    m_pages->insertWidget(EmptyPage, m_emptyText);
    m_pages->insertWidget(ContentPage, splitter);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addLayout(top);
    layout->addWidget(m_pages, 1);

    whenTypingSettles(m_filter, [this] { applyFilter(); });

    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        if (!m_filtering && !rows.isEmpty())
            showConversation(rows.first().data(ConversationListModel::ConversationIdRole).toString());
    });
    connect(m_turnTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        if (current.isValid())
            m_currentTurnId = current.data(TurnListModel::TurnIdRole).toString();
        updateTurnText();
    });
    connect(m_turnTable, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex &index) {
        const int answered = index.data(TurnListModel::ReplyToRowRole).toInt();
        if (index.column() == TurnListModel::ReplyToColumn && answered >= 0)
            selectTurnRow(answered);
        else
            openTurnEvent(index.row());
    });
    connect(m_goToAnswered, &QPushButton::clicked, this, &ConversationsPanel::goToAnsweredTurn);
    connect(m_threads, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem *item) {
        selectTurnRow(m_turns->rowOfTurn(item->data(0, kThreadTurnRole).toString()));
    });
    // A reset of the turns (another conversation, a history page that reordered them) keeps the
    // turn being read when it is still there.
    connect(m_turns, &QAbstractItemModel::modelReset, this, [this] {
        selectTurnRow(m_turns->rowOfTurn(m_currentTurnId));
        updateTurnText();
    });
    connect(m_turns, &QAbstractItemModel::dataChanged, this, &ConversationsPanel::updateTurnText);
    connect(session->store(), &SystemStore::changed, this, &ConversationsPanel::onStoreChanged);
    connect(session->store(), &SystemStore::wasReset, this, [this] {
        showConversation({});
        updateEmptyState();
        updateCounts();
        updateAvailability();
    });

    m_available = session->store()->connection().mail || !session->store()->conversations().empty();
    updateEmptyState();
    updateCounts();
    updateConversationDetails();
    updateThreads();
    updateTurnText();
}

QString ConversationsPanel::currentConversationId() const
{
    return m_turns->conversationId();
}

void ConversationsPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && m_participants) // those who left are in a palette colour
        updateConversationDetails();
}

bool ConversationsPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_turnTable && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if ((key == Qt::Key_Return || key == Qt::Key_Enter) && currentTurnRow() >= 0) {
            openTurnEvent(currentTurnRow());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ConversationsPanel::onStoreChanged(const ChangeSet &changes)
{
    const bool conversationsChanged = !changes.conversationRows.isEmpty();
    if (conversationsChanged || changes.connectionChanged) {
        updateEmptyState();
        updateAvailability();
    }
    if (conversationsChanged)
        updateCounts();
    // The turn model (connected before this panel) has already taken its new snapshot.
    if (m_turns->conversationId().isEmpty())
        return;
    const int row = m_turns->conversationRow();
    const bool conversationChanged = conversationsChanged && (row < 0 || changes.conversationRows.contains(row));
    // Names follow agents' renames and sessions; the threads change only with the conversation.
    if (conversationChanged || !changes.agentRows.isEmpty() || changes.firstNewAgentRow >= 0)
        updateConversationDetails();
    if (conversationChanged)
        updateThreads();
}

void ConversationsPanel::showConversation(const QString &conversationId)
{
    if (conversationId == m_turns->conversationId())
        return;
    m_currentTurnId.clear();
    m_turns->setConversationId(conversationId);
    updateConversationDetails();
    updateThreads();
    updateTurnText();
}

void ConversationsPanel::updateEmptyState()
{
    const SystemStore &store = *m_session->store();
    const bool none = store.conversations().empty();
    if (none)
        m_emptyText->setText(store.connection().mail
                                 ? tr("No conversations yet")
                                 : tr("This server does not serve conversations (no capabilities.mail in map/connect)"));
    m_pages->setCurrentIndex(none ? EmptyPage : ContentPage);
    m_filter->setEnabled(!none);
}

void ConversationsPanel::updateCounts()
{
    const ConversationLedger &ledger = m_session->store()->conversations();
    if (ledger.empty()) {
        m_counts->clear();
        return;
    }
    const qsizetype conversations = qsizetype(ledger.conversations().size());
    QStringList parts{conversations == 1 ? tr("1 conversation") : tr("%1 conversations").arg(conversations),
                      tr("%1 turn(s) kept").arg(ledger.turnCount())};
    if (ledger.conversationsNotKept() > 0)
        parts << tr("%1 more not kept (the console keeps %2)").arg(ledger.conversationsNotKept()).arg(ConversationLedger::kMaxConversations);
    m_counts->setText(parts.join(QStringLiteral(" · ")));
}

void ConversationsPanel::updateConversationDetails()
{
    const SystemStore &store = *m_session->store();
    const QString id = m_turns->conversationId();
    const Conversation *c = id.isEmpty() ? nullptr : store.conversations().find(id);
    if (!c) {
        m_header->setText(id.isEmpty() ? tr("Select a conversation to read its turns.")
                                       : tr("Conversation %1 is not in the model.").arg(id.toHtmlEscaped()));
        m_participants->clear();
        return;
    }

    QStringList header{QStringLiteral("<b>%1</b>").arg((c->subject.isEmpty() ? c->id : c->subject).toHtmlEscaped())};
    if (!c->type.isEmpty())
        header << c->type.toHtmlEscaped();
    header << c->status.toHtmlEscaped();
    if (!c->closeReason.isEmpty())
        header << tr("closed: %1").arg(c->closeReason.toHtmlEscaped());
    QString created = c->createdBy.isEmpty() ? tr("created") : tr("created by %1").arg(store.participantName(c->createdBy).toHtmlEscaped());
    if (c->createdMs > 0)
        created += QLatin1Char(' ') + tr("at %1").arg(dateAndTime(c->createdMs));
    header << created;
    if (c->closedMs > 0)
        header << tr("closed at %1").arg(dateAndTime(c->closedMs));
    m_header->setText(header.join(QStringLiteral(" · ")));

    QStringList participants;
    for (const SystemStore::ParticipantRow &p : store.conversationParticipants(*c))
        participants << participantHtml(p, palette());
    m_participants->setText(participants.isEmpty() ? tr("No participants known")
                                                   : tr("Participants: %1").arg(participants.join(QStringLiteral(" · "))));
}

void ConversationsPanel::updateThreads()
{
    const QString id = m_turns->conversationId();
    const Conversation *c = id.isEmpty() ? nullptr : m_session->store()->conversations().find(id);
    // Rebuilt whole (at most kMaxPerConversation items), only when the conversation changed:
    // a thread's root turn number moves with the turns kept.
    const QString selectedThread = m_threads->currentItem() ? m_threads->currentItem()->data(1, kThreadTurnRole).toString() : QString();
    m_threads->clear();
    if (!c)
        return;
    QList<QTreeWidgetItem *> items;
    items.reserve(qsizetype(c->threads.size()));
    for (const ConversationThread &thread : c->threads) {
        const int rootRow = m_turns->rowOfTurn(thread.rootTurnId);
        auto *item = new QTreeWidgetItem(QStringList{thread.subject.isEmpty() ? thread.id : thread.subject,
                                                     rootRow >= 0 ? QStringLiteral("#%1").arg(rootRow + 1) : thread.rootTurnId});
        item->setData(0, kThreadTurnRole, thread.rootTurnId);
        item->setData(1, kThreadTurnRole, thread.id);
        item->setToolTip(0, tr("thread %1").arg(thread.id));
        item->setToolTip(1, thread.rootTurnId);
        items << item;
    }
    m_threads->addTopLevelItems(items);
    for (QTreeWidgetItem *item : std::as_const(items))
        if (item->data(1, kThreadTurnRole).toString() == selectedThread)
            m_threads->setCurrentItem(item);
}

void ConversationsPanel::applyFilter()
{
    // A single-selection view whose selected row is filtered out selects a neighbour: the
    // conversation being read stays shown below, selected where it is still listed.
    m_filtering = true;
    m_proxy->setFilterFixedString(m_filter->text());
    m_filtering = false;
    const int sourceRow = m_turns->conversationId().isEmpty() ? -1 : m_model->rowOfConversation(m_turns->conversationId());
    const QModelIndex shown = sourceRow < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    if (shown.isValid())
        m_table->selectionModel()->setCurrentIndex(shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    else
        m_table->selectionModel()->clearSelection();
}

int ConversationsPanel::currentTurnRow() const
{
    const QModelIndex current = m_turnTable->selectionModel()->currentIndex();
    return current.isValid() ? current.row() : -1;
}

void ConversationsPanel::selectTurnRow(int row)
{
    if (row < 0 || row >= m_turns->rowCount())
        return;
    const QModelIndex index = m_turns->index(row, 0);
    m_turnTable->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_turnTable->scrollTo(index);
}

void ConversationsPanel::updateTurnText()
{
    const int row = currentTurnRow();
    if (row < 0) {
        m_turnText->clear();
        m_goToAnswered->setEnabled(false);
        m_goToAnswered->setToolTip({});
        return;
    }
    const QModelIndex index = m_turns->index(row, 0);
    QString text = index.data(TurnListModel::FullTextRole).toString();
    if (index.data(TurnListModel::TextCutRole).toBool())
        text += QStringLiteral("\n\n")
            + tr("[cut at %1 characters: the whole content is in the event's frame; double-click the turn to open it in the inspector]")
                  .arg(ConversationLedger::kMaxTurnTextChars);
    if (m_turnText->toPlainText() != text) // unchanged: the reader's scroll position stays
        m_turnText->setPlainText(text);
    const int answered = index.data(TurnListModel::ReplyToRowRole).toInt();
    m_goToAnswered->setEnabled(answered >= 0);
    m_goToAnswered->setToolTip(answered >= 0 ? tr("Select turn #%1").arg(answered + 1) : QString());
}

void ConversationsPanel::goToAnsweredTurn()
{
    const int row = currentTurnRow();
    if (row >= 0)
        selectTurnRow(m_turns->index(row, 0).data(TurnListModel::ReplyToRowRole).toInt());
}

void ConversationsPanel::openTurnEvent(int turnRow)
{
    if (turnRow < 0 || turnRow >= m_turns->rowCount())
        return;
    const int eventRow = m_turns->index(turnRow, 0).data(TurnListModel::EventRowRole).toInt();
    if (eventRow >= 0) // -1: known from a history page, no event to open
        m_selection->focus(SelectionHub::Kind::Event, QString::number(eventRow), this);
}

void ConversationsPanel::updateAvailability()
{
    const SystemStore &store = *m_session->store();
    const bool available = store.connection().mail || !store.conversations().empty();
    if (available == m_available)
        return;
    m_available = available;
    Q_EMIT availabilityChanged(available);
}

} // namespace mapi::ui
