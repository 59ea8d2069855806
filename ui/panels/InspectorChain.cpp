// InspectorPanel: the Chain tab, what caused the focused message and what it led to (walked in
// slices off the GUI thread's hot path by CausalChains), and walking it (Alt+arrows).
#include "panels/InspectorPanel.h"

#include "common/TimeText.h"
#include "model/CausalChains.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"

#include <QFont>
#include <QLabel>
#include <QTabWidget>
#include <QTreeWidget>

namespace mapi::ui {

using Kind = SelectionHub::Kind;

int InspectorPanel::chainMessageRow() const
{
    const MessageLog &messages = m_store->messages();
    switch (m_kind) {
    case Kind::Message: return inspectorRowKey(m_key, messages.size(), messages.firstRow());
    case Kind::Event:
        if (const int row = inspectorRowKey(m_key, m_store->events().size(), m_store->events().firstRow()); row >= 0) {
            const int message = m_store->events()[size_t(row)].messageIndex();
            return message >= 0 && messages.isKept(size_t(message)) ? message : -1;
        }
        return -1;
    case Kind::Task: {
        // Its first message: found once per focus (a scan of the messages), then remembered.
        if (m_taskChainKey == m_key && (m_taskChainRow < 0 || messages.isKept(size_t(m_taskChainRow))))
            return m_taskChainRow;
        m_taskChainKey = m_key;
        m_taskChainRow = -1;
        for (size_t row = messages.firstRow(); row < messages.size(); ++row)
            if (messages.taskId(row) == m_key) {
                m_taskChainRow = int(row);
                break;
            }
        return m_taskChainRow;
    }
    default: return -1;
    }
}

QTreeWidgetItem *InspectorPanel::addChainRow(const QStringList &columns, QTreeWidgetItem *parent, bool focused)
{
    auto *item = parent ? new QTreeWidgetItem(parent, columns) : new QTreeWidgetItem(m_chainTree, columns);
    if (focused) {
        QFont bold = item->font(0);
        bold.setBold(true);
        for (int c = 0; c < columns.size(); ++c)
            item->setFont(c, bold);
    }
    return item;
}

QTreeWidgetItem *InspectorPanel::chainItem(int row, QTreeWidgetItem *parent, bool focused)
{
    const MessageLog &messages = m_store->messages();
    QStringList to;
    for (int i = 0; i < messages.recipientCount(size_t(row)) && i < 3; ++i)
        to << m_store->agentName(messages.recipient(size_t(row), i));
    if (messages.recipientCount(size_t(row)) > 3)
        to << tr("%1 more").arg(messages.recipientCount(size_t(row)) - 3);
    QString type = messages.payloadType(size_t(row));
    if (type.isEmpty())
        type = conventionName(messages.convention(size_t(row)));
    const QString from = m_store->agentName(messages.fromAgentId(size_t(row)));
    const QString text = tr("%1 → %2 · %3").arg(from.isEmpty() ? tr("(unknown)") : from,
                                                to.isEmpty() ? tr("(nobody)") : to.join(QStringLiteral(", ")),
                                                type.isEmpty() ? tr("message") : type);
    const QStringList columns{text, timeOfDay(messages.timestampMs(size_t(row)), TimePrecision::Milliseconds),
                              CausalChains::linkName(m_chains->linkOf(row))};
    QTreeWidgetItem *item = addChainRow(columns, parent, focused);
    item->setData(0, Qt::UserRole, row);
    return item;
}

QTreeWidgetItem *InspectorPanel::eventChainItem(int event, QTreeWidgetItem *parent, bool focused)
{
    const EventLog &events = m_store->events();
    const EventEntry &e = events[size_t(event)];
    const QString agent = m_store->agentName(events.agentId(e));
    const QString text = tr("%1 · %2").arg(events.type(e), agent.isEmpty() ? tr("(no agent)") : agent);
    const QStringList columns{text, timeOfDay(e.timestampMs, TimePrecision::Milliseconds), tr("causedBy")};
    QTreeWidgetItem *item = addChainRow(columns, parent, focused);
    item->setData(0, Qt::UserRole + 1, event);
    return item;
}

bool InspectorPanel::showEventChain(int event)
{
    const EventLog &events = m_store->events();
    // Its causes, root first (the first one each names), then it and what it led to.
    std::vector<int> causes;
    for (int at = event; int(causes.size()) < kMaxChainShown / 2;) {
        const std::vector<int> up = events.causesOf(size_t(at));
        if (up.empty() || up.front() == event || std::find(causes.begin(), causes.end(), up.front()) != causes.end())
            break;
        causes.push_back(up.front());
        at = up.front();
    }
    if (causes.empty() && events.effectsOf(size_t(event)).empty())
        return false;
    std::reverse(causes.begin(), causes.end());
    for (const int c : causes)
        eventChainItem(c, nullptr, false);
    QTreeWidgetItem *focusedItem = eventChainItem(event, nullptr, true);
    int shown = int(causes.size()) + 1;
    std::vector<std::pair<int, QTreeWidgetItem *>> queue{{event, focusedItem}};
    std::vector<int> seen{event};
    for (size_t i = 0; i < queue.size(); ++i)
        for (const int effect : events.effectsOf(size_t(queue[i].first))) {
            if (shown >= kMaxChainShown || std::find(seen.begin(), seen.end(), effect) != seen.end())
                continue;
            ++shown;
            seen.push_back(effect);
            queue.emplace_back(effect, eventChainItem(effect, queue[i].second, false));
        }
    m_chainTree->expandAll();
    m_chainTree->setCurrentItem(focusedItem);
    QString note = causes.empty() ? tr("Nothing known caused it") : tr("Caused by %n event(s)", nullptr, int(causes.size()));
    note += QStringLiteral(" · ") + (queue.size() == 1 ? tr("it led to nothing known") : tr("led to %n event(s)", nullptr, int(queue.size() - 1)));
    m_chainNote->setText(note + tr(" (MAP causedBy)"));
    return true;
}

void InspectorPanel::refreshChain()
{
    m_chainTree->clear();
    const int row = chainMessageRow();
    if (row < 0) {
        m_selection->setChain({});
        if (m_kind == Kind::Event)
            if (const int event = inspectorRowKey(m_key, m_store->events().size(), m_store->events().firstRow());
                event >= 0 && showEventChain(event))
                return;
        m_chainNote->setText(m_kind == Kind::None    ? QString()
                             : m_kind == Kind::Event ? tr("This event carried no message and no causedBy links it: no causal chain.")
                                                     : tr("This item carries no message: no causal chain."));
        return;
    }
    if (!m_chains->update(kChainSliceRows)) {
        m_chainNote->setText(tr("Finding causal links: %1 messages to go…").arg(m_chains->pending()));
        m_chainTimer->start();
        m_selection->setChain({});
        return;
    }
    // What caused it, root first; then it, with what it led to below it (breadth first, so
    // near effects come before far ones when the tree is cut).
    const std::vector<int> causes = m_chains->chainTo(row, kMaxChainShown / 2);
    std::vector<int> chain(causes.begin(), causes.end() - 1);
    QTreeWidgetItem *previous = nullptr;
    for (size_t i = 0; i + 1 < causes.size(); ++i)
        previous = chainItem(causes[i], nullptr, false);
    Q_UNUSED(previous);
    QTreeWidgetItem *focusedItem = chainItem(row, nullptr, true);
    int shown = int(causes.size());
    std::vector<std::pair<int, QTreeWidgetItem *>> queue{{row, focusedItem}};
    for (size_t i = 0; i < queue.size(); ++i) {
        chain.push_back(queue[i].first);
        for (const int effect : m_chains->effectsOf(queue[i].first)) {
            if (shown >= kMaxChainShown)
                break;
            ++shown;
            queue.emplace_back(effect, chainItem(effect, queue[i].second, false));
        }
    }
    m_chainTree->expandAll();
    m_chainTree->setCurrentItem(focusedItem);
    m_chainTree->scrollToItem(focusedItem);
    const size_t causeCount = causes.size() - 1;
    const size_t effectCount = queue.size() - 1;
    QString note = causeCount == 0 ? tr("Nothing known caused it") : tr("Caused by %n message(s)", nullptr, int(causeCount));
    note += QStringLiteral(" · ") + (effectCount == 0 ? tr("it led to nothing known") : tr("led to %n message(s)", nullptr, int(effectCount)));
    if (shown >= kMaxChainShown)
        note += tr(" (the first %1 shown)").arg(kMaxChainShown);
    m_chainNote->setText(note);
    m_selection->setChain(chain);
}

bool InspectorPanel::goToCause()
{
    const int row = chainMessageRow();
    const int cause = row >= 0 ? m_chains->causeOf(row) : -1;
    if (cause < 0)
        return false;
    m_selection->focus(Kind::Message, QString::number(cause), this);
    return true;
}

bool InspectorPanel::goToEffect()
{
    const int row = chainMessageRow();
    const std::vector<int> effects = row >= 0 ? m_chains->effectsOf(row) : std::vector<int>{};
    if (effects.empty())
        return false;
    m_selection->focus(Kind::Message, QString::number(effects.front()), this);
    return true;
}

bool InspectorPanel::goToSibling(int delta)
{
    const int row = chainMessageRow();
    const int cause = row >= 0 ? m_chains->causeOf(row) : -1;
    if (cause < 0)
        return false;
    const std::vector<int> siblings = m_chains->effectsOf(cause);
    const auto at = std::find(siblings.begin(), siblings.end(), row);
    const qsizetype next = qsizetype(at - siblings.begin()) + delta;
    if (at == siblings.end() || next < 0 || next >= qsizetype(siblings.size()))
        return false;
    m_selection->focus(Kind::Message, QString::number(siblings[size_t(next)]), this);
    return true;
}

} // namespace mapi::ui
