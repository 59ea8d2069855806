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

} // namespace

ConversationsPanel::ConversationsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_selection(selection)
    , m_model(new ConversationListModel(session->store(), this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_turns(new TurnListModel(session->store(), this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(ConversationListModel::SortRole);
    m_proxy->setSortCaseSensitivity(Qt::CaseInsensitive);
    // One column carries the whole filter text (subject, type, status, participant names).
    m_proxy->setFilterRole(ConversationListModel::FilterTextRole);
    m_proxy->setFilterKeyColumn(ConversationListModel::SubjectColumn);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setDynamicSortFilter(true);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("conversationFilter"));
    m_filter->setPlaceholderText(tr("Filter conversations: subject, participant, type, status"));
    m_filter->setClearButtonEnabled(true);
    m_counts = new QLabel(this);
    m_counts->setObjectName(QStringLiteral("conversationCounts"));
    m_counts->setTextFormat(Qt::PlainText);
    auto *top = new QHBoxLayout;
    top->addWidget(m_filter, 2);
    top->addWidget(m_counts, 3);

    // Fixed widths from sample texts: ResizeToContents would measure every row on each change.
    const QFontMetrics metrics = fontMetrics();
    auto widthOf = [&metrics](const QString &sample) { return metrics.horizontalAdvance(sample) + 16; };
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("conversationsTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    // Like an inbox: the most recently active first. The selection stays with its conversation
    // when a new turn moves it up.
    m_table->sortByColumn(ConversationListModel::LastActivityColumn, Qt::DescendingOrder);
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, ConversationListModel::SubjectColumn);
    QHeaderView *header = m_table->horizontalHeader();
    header->resizeSection(ConversationListModel::TypeColumn, widthOf(QStringLiteral("multi-agent")));
    header->resizeSection(ConversationListModel::StatusColumn, widthOf(QStringLiteral("completed · review finished")));
    header->resizeSection(ConversationListModel::ParticipantsColumn, widthOf(tr("Participants")));
    header->resizeSection(ConversationListModel::TurnsColumn, widthOf(QStringLiteral("1000 (100 earlier not kept)")));
    header->resizeSection(ConversationListModel::LastActivityColumn, widthOf(tr("Last activity")));

    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("conversationHeader"));
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_participants = new QLabel(this);
    m_participants->setObjectName(QStringLiteral("conversationParticipants"));
    m_participants->setTextFormat(Qt::RichText);
    m_participants->setWordWrap(true);
    m_participants->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_turnTable = new QTableView(this);
    m_turnTable->setObjectName(QStringLiteral("turnsTable"));
    m_turnTable->setModel(m_turns);
    setUpReadOnlyTable(m_turnTable, QAbstractItemView::SingleSelection, TurnListModel::TextColumn);
    m_turnTable->installEventFilter(this); // Enter opens the turn's event
    QHeaderView *turnHeader = m_turnTable->horizontalHeader();
    turnHeader->moveSection(turnHeader->visualIndex(TurnListModel::NumberColumn), 0); // the turn's number first
    turnHeader->resizeSection(TurnListModel::NumberColumn, widthOf(QStringLiteral("0000")));
    turnHeader->resizeSection(TurnListModel::TimeColumn, widthOf(QStringLiteral("00:00:00.000")));
    turnHeader->resizeSection(TurnListModel::ParticipantColumn, widthOf(QStringLiteral("worker-10.sub-10")));
    turnHeader->resizeSection(TurnListModel::ThreadColumn, widthOf(QStringLiteral("repro steps, part 2")));
    turnHeader->resizeSection(TurnListModel::ReplyToColumn, widthOf(QStringLiteral("↩ #0000")));
    turnHeader->resizeSection(TurnListModel::ContentTypeColumn, widthOf(QStringLiteral("data · intercepted (msg-000)")));

    m_goToAnswered = new QPushButton(tr("Go to the turn it answers"), this);
    m_goToAnswered->setObjectName(QStringLiteral("goToAnsweredTurn"));
    m_goToAnswered->setEnabled(false);
    m_turnText = new QPlainTextEdit(this);
    m_turnText->setObjectName(QStringLiteral("turnText"));
    m_turnText->setReadOnly(true);
    m_turnText->setPlaceholderText(tr("Select a turn to read it whole."));
    auto *textBox = new QWidget(this);
    auto *textLayout = new QVBoxLayout(textBox);
    textLayout->setContentsMargins(0, 0, 0, 0);
    textLayout->setSpacing(2);
    auto *textButtons = new QHBoxLayout;
    textButtons->addWidget(m_goToAnswered);
    textButtons->addStretch(1);
    textLayout->addLayout(textButtons);
    textLayout->addWidget(m_turnText, 1);

    m_threads = new QTreeWidget(this);
    m_threads->setObjectName(QStringLiteral("conversationThreads"));
    m_threads->setHeaderLabels({tr("Thread"), tr("Root turn")});
    m_threads->setRootIsDecorated(false);
    m_threads->setUniformRowHeights(true);
    m_threads->setAlternatingRowColors(true);
    m_threads->setToolTip(tr("Double-click a thread to select its root turn"));

    auto *lower = new QSplitter(Qt::Horizontal, this);
    lower->setChildrenCollapsible(false);
    lower->addWidget(textBox);
    lower->addWidget(m_threads);
    lower->setStretchFactor(0, 3);
    lower->setStretchFactor(1, 1);
    auto *turnSplitter = new QSplitter(Qt::Vertical, this);
    turnSplitter->setChildrenCollapsible(false);
    turnSplitter->addWidget(m_turnTable);
    turnSplitter->addWidget(lower);
    turnSplitter->setStretchFactor(0, 3);
    turnSplitter->setStretchFactor(1, 2);

    auto *detailBox = new QWidget(this);
    auto *detailLayout = new QVBoxLayout(detailBox);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    detailLayout->setSpacing(2);
    detailLayout->addWidget(m_header);
    detailLayout->addWidget(m_participants);
    detailLayout->addWidget(turnSplitter, 1);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_table);
    splitter->addWidget(detailBox);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);

    m_emptyText = new QLabel(this);
    m_emptyText->setObjectName(QStringLiteral("conversationsEmpty"));
    m_emptyText->setTextFormat(Qt::PlainText);
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
