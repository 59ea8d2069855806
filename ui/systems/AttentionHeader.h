// The line at the top of the window that answers "is anything wrong?" (issue 44 item 5): for
// the system in front, its agents counted per health and per state, and its open alerts; below
// it, while the window holds several systems, one such line per other system. Every count is a
// link: a health or a state filters that system's Agents panel ("health:unresponsive"), the
// alerts open its inbox. Worst first; what counts zero is left out, so that a healthy system's
// line is short and a troubled one's starts with its trouble.
//
// Refreshed once a second (and when systems come, go or change places): counting 10,000 agents
// takes about half a millisecond; the text is set only when it changed. GUI thread.
#pragma once

#include <QList>
#include <QTimer>
#include <QWidget>

#include <functional>

class QLabel;

namespace mapi::ui {

class SystemView;

class AttentionHeader : public QWidget
{
    Q_OBJECT
public:
    AttentionHeader(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QWidget *parent = nullptr);

    // Counts again now (systems came or went, another came to the front).
    void refresh();
    // Counts again shortly (alerts changed: a storm's parts come a turn each, one count for all).
    void refreshSoon();
    // The links of the lines, as shown (tests): "filter:<system number>:<query>", "alerts:<n>".
    QStringList links() const;
    // What a click on `link` does (tests click through here).
    void activate(const QString &link);
    // The text of the lines, without markup (tests, the accessible description).
    QString plainText() const;

Q_SIGNALS:
    // The operator clicked a count: show `system` with its Agents panel narrowed to `query`.
    void agentsFilterRequested(mapi::ui::SystemView *system, const QString &query);
    // The operator clicked the alerts: show `system`'s inbox.
    void alertsRequested(mapi::ui::SystemView *system);

private:
    QString lineOf(SystemView *system, bool named) const;

    std::function<QList<SystemView *>()> m_systems;
    std::function<SystemView *()> m_front;
    QLabel *m_text;
    QTimer m_tick;
    QTimer m_soon;
};

} // namespace mapi::ui
