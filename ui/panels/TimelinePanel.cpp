#include "panels/TimelinePanel.h"

#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/TimelineView.h"

#include "common/FoldingBar.h"

#include <QComboBox>
#include <QToolBar>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace mapi::ui {

TimelinePanel::TimelinePanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_view(new TimelineView(session->store(), selection, this))
    , m_grouping(new QComboBox(this))
    , m_follow(new QToolButton(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("timelinePanel"));
    QToolBar *bar = foldingBar(this, QStringLiteral("timelineBar"));

    m_grouping->setObjectName(QStringLiteral("timelineGrouping"));
    m_grouping->addItem(tr("By scope"), int(LaneGrouping::Scope));
    m_grouping->addItem(tr("By subtree"), int(LaneGrouping::Subtree));
    m_grouping->setToolTip(tr("Group the lanes by scope, or by parent/child subtree"));
    connect(m_grouping, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { m_view->setGrouping(LaneGrouping(m_grouping->currentData().toInt())); });
    bar->addWidget(m_grouping);

    auto addButton = [this, bar](const char *name, const QString &text, const QString &toolTip) {
        auto *button = new QToolButton(this);
        button->setObjectName(QLatin1String(name));
        button->setText(text);
        button->setToolTip(toolTip);
        button->setAutoRaise(true);
        bar->addWidget(button);
        return button;
    };
    connect(addButton("timelineCollapseAll", tr("Collapse all"), tr("Fold every group into one lane")),
            &QToolButton::clicked, m_view, &TimelineView::collapseAll);
    connect(addButton("timelineExpandAll", tr("Expand all"), tr("Show one lane per agent")), &QToolButton::clicked,
            m_view, &TimelineView::expandAll);
    bar->addSeparator();
    connect(addButton("timelineZoomOut", tr("−"), tr("Zoom out (−, Ctrl+wheel)")), &QToolButton::clicked, m_view,
            [this] { m_view->zoomBy(1 / 1.5); });
    connect(addButton("timelineZoomIn", tr("+"), tr("Zoom in (+, Ctrl+wheel)")), &QToolButton::clicked, m_view,
            [this] { m_view->zoomBy(1.5); });
    connect(addButton("timelineFit", tr("Fit"), tr("Show everything (0)")), &QToolButton::clicked, m_view,
            &TimelineView::showAll);
    bar->addSeparator();

    m_follow->setObjectName(QStringLiteral("timelineFollow"));
    m_follow->setText(tr("Follow live"));
    m_follow->setCheckable(true);
    m_follow->setChecked(m_view->followLive());
    m_follow->setAutoRaise(true);
    m_follow->setToolTip(tr("Keep the newest events in sight (End). Scrolling back pauses it; data keeps arriving."));
    connect(m_follow, &QToolButton::toggled, m_view, &TimelineView::setFollowLive);
    connect(m_view, &TimelineView::followLiveChanged, m_follow, &QToolButton::setChecked);
    // A trace, or a live session's past: "follow" follows the replay's position, and says so.
    const auto updateMode = [this, session] {
        const bool replaying = session->source() == InspectorSession::Source::Trace || session->isTimeTravelling();
        m_view->setReplaying(replaying);
        m_follow->setText(replaying ? tr("Follow replay") : tr("Follow live"));
    };
    connect(session, &InspectorSession::sourceChanged, this, updateMode);
    connect(session, &InspectorSession::sourceReplaced, m_view, &TimelineView::resetZoom);
    connect(session, &InspectorSession::timeTravelChanged, this, updateMode);
    updateMode();
    bar->addWidget(m_follow);
    addStretch(bar);

    m_summary->setObjectName(QStringLiteral("timelineSummary"));
    m_summary->setToolTip(tr("<b>Reading the timeline</b><br>"
                             "Arrows: messages from the sender (dot) to each recipient; heartbeats are ticks.<br>"
                             "Colours: task traffic blue, failures and error reports red, steering violet, "
                             "status teal, help requests amber.<br>"
                             "Lane strip: agent state (green working, pale idle, blue suspended, grey stopped, "
                             "red failed); diamonds mark state changes.<br>"
                             "Flags: operator actions (amber pending, green confirmed, red failed).<br>"
                             "Hatched red bands: gaps in the event stream.<br>"
                             "Shaded cells: too many messages per pixel to draw one by one; zoom in.<br>"
                             "Wheel: scroll time · Shift+wheel: scroll lanes · Ctrl+wheel: zoom · drag: pan · "
                             "End: follow live · 0: fit"));
    bar->addWidget(m_summary);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(bar);
    layout->addWidget(m_view, 1);

    connect(m_view, &TimelineView::dataChanged, this, &TimelinePanel::updateSummary);
    connect(m_view, &TimelineView::lanesChanged, this, &TimelinePanel::updateSummary);
    updateSummary();
}

void TimelinePanel::updateSummary()
{
    auto count = [](int n, const QString &one, const QString &many) { return n == 1 ? one : many.arg(n); };
    const TimelineIndex &index = m_view->index();
    QStringList parts{count(int(index.messages().size()), tr("1 message"), tr("%1 messages")),
                      count(index.laneCount(), tr("1 agent"), tr("%1 agents")),
                      count(m_view->lanes().groupCount(), tr("1 group"), tr("%1 groups"))};
    if (!index.gaps().empty())
        parts << count(int(index.gaps().size()), tr("1 gap"), tr("%1 gaps"));
    if (index.trimmedEvents() > 0) // short here: the plot's boundary label says when
        parts << tr("%Ln events trimmed", nullptr, int(std::min<qint64>(index.trimmedEvents(), INT_MAX)));
    m_summary->setText(parts.join(QStringLiteral(" · ")));
}

} // namespace mapi::ui
