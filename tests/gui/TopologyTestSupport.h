// What the topology's GUI tests share: a panel on a session replaying a real capture (20 agents,
// 3 scopes, messages), inputs made by hand, and a colour comparison.
#pragma once

#include "GuiTestSupport.h"
#include "StateSpellings.h"

#include "panels/TopologyPanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "style/Colors.h"
#include "style/Theme.h"
#include "topology/TopologyCamera.h"
#include "common/NaturalSort.h"
#include "topology/TopologyGraph.h"
#include "topology/TopologyLayout.h"
#include "topology/TopologyStyle.h"
#include "topology/TopologyView.h"

#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include <cmath>
#include <memory>

namespace mapi::test_topology {

using namespace mapi;
using namespace mapi::ui;

const QString kCoordinator = QStringLiteral("01M7YNTXTCR87GCYP22D2WXKWD");
const QString kWorker2 = QStringLiteral("01M7YNTXW4C4PZ4HWW1FC4QC1G");
const QString kWorker3Sub1 = QStringLiteral("01M7YNTY1C23FTTF8NPNWQFD9J"); // custom:failed

inline double distance(QPointF a, QPointF b)
{
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

// A panel on a session replaying the capture, shown and laid out.
struct Fixture
{
    InspectorSession session;
    SelectionHub hub;
    std::unique_ptr<TopologyPanel> panel;
    TopologyView *view = nullptr;

    // `showDeparted`: the capture's departed leaf drawn too (the default hides it), so that every
    // agent has a node.
    bool open(bool showDeparted = true)
    {
        QString error;
        if (!session.openTraceAndWait(QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson"), &error))
            return false;
        panel = std::make_unique<TopologyPanel>(&session, &hub);
        panel->resize(1200, 800);
        panel->show();
        view = panel->view();
        view->setShowDeparted(showDeparted);
        return QTest::qWaitForWindowExposed(panel.get());
    }
    const SystemStore &store() const { return *session.store(); }
    QPointF position(const QString &id) const { return view->nodePosition(id).value(); }
    QPoint screenPoint(const QString &id) const { return view->mapToView(position(id)).toPoint(); }
};

inline ModelInput agentRegistered(const QString &id, const QString &name, const QStringList &scopes)
{
    EventInput input;
    input.event.kind = EventKind::AgentRegistered;
    input.event.type = QStringLiteral("agent.registered");
    input.event.eventId = QStringLiteral("registered-") + id + QLatin1Char('-') + name; // a rename is a new event
    input.event.agentId = id;
    input.event.timestampMs = 1800000000000;
    AgentRecord record;
    record.id = id;
    record.name = name;
    record.state = QStringLiteral("idle");
    record.scopes = scopes;
    input.event.agent = record;
    input.receivedMs = input.event.timestampMs;
    return input;
}

inline ModelInput messageSent(int index, const QString &from, const QString &to, qint64 timeMs)
{
    EventInput input;
    input.event.kind = EventKind::MessageSent;
    input.event.type = QStringLiteral("message.sent");
    input.event.eventId = QStringLiteral("message-event-%1").arg(index);
    input.event.timestampMs = timeMs;
    MessageRecord message;
    message.id = QStringLiteral("message-%1").arg(index);
    message.from = from;
    message.to = Json(to.toStdString());
    message.timestampMs = timeMs;
    input.event.message = message;
    input.receivedMs = timeMs;
    return input;
}

inline bool colorsClose(const QColor &a, const QColor &b, int tolerance = 12)
{
    return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance
           && std::abs(a.blue() - b.blue()) <= tolerance;
}

} // namespace mapi::test_topology
