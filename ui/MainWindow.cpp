#include "MainWindow.h"

#include "alerts/AlertMonitor.h"
#include "controllers/AlertDeliveryController.h"
#include "controllers/ConnectionController.h"
#include "controllers/ControlController.h"
#include "controllers/ExportController.h"
#include "controllers/MetricsController.h"
#include "controllers/TelemetryController.h"
#include "controllers/TraceController.h"
#include "panels/AgentsPanel.h"
#include "panels/TimelinePanel.h"
#include "panels/TopologyPanel.h"
#include "panels/WelcomePage.h"
#include "replay/ReplayBar.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "systems/AttentionHeader.h"
#include "systems/SystemView.h"
#include "style/Theme.h"
#include "timeline/TimelineView.h"
#include "topology/TopologyView.h"

#include <cmath>
#include <utility>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDeadlineTimer>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QBoxLayout>
#include <QToolButton>
#include <QBoxLayout>

namespace mapi::ui {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_memoryBudget(InspectorSession::kDefaultMemoryBudgetBytes)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(QStringLiteral("MAP Inspector"));
    setDockNestingEnabled(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

    buildActions();
    m_center = new QStackedWidget(this);
    m_welcome = new WelcomePage(this);
    connect(m_welcome, &WelcomePage::connectRequested, this, [this](const QString &url) { showConnectDialog(url); });
    connect(m_welcome, &WelcomePage::openTraceRequested, this, [this](const QString &path) {
        if (path.isEmpty())
            traces()->showOpenTraceDialog();
        else
            openTraceBeside(path);
    });
    connect(m_welcome, &WelcomePage::openSampleRequested, this, [this] { traces()->openSampleTrace(); });
    m_center->addWidget(m_welcome);
    // Above the centre: "is anything wrong?", each count a filter (issue 44 item 5).
    m_attention = new AttentionHeader([this] { return m_systems; }, [this] { return m_front; }, this);
    connect(m_attention, &AttentionHeader::agentsFilterRequested, this, [this](SystemView *system, const QString &query) {
        showSystem(system);
        if (QDockWidget *d = dock(QStringLiteral("agentsDock"))) {
            d->show();
            d->raise();
        }
        system->agents()->setFilterText(query);
    });
    connect(m_attention, &AttentionHeader::alertsRequested, this, [this](SystemView *system) {
        showSystem(system);
        if (QDockWidget *d = dock(QStringLiteral("alertsDock"))) {
            d->show();
            d->raise();
        }
    });
    connect(this, &MainWindow::systemsChanged, m_attention, &AttentionHeader::refresh);
    auto *central = new QWidget(this);
    auto *column = new QBoxLayout(QBoxLayout::TopToBottom, central);
    column->setContentsMargins(QMargins());
    column->setSpacing(0);
    column->addWidget(m_attention);
    column->addWidget(m_center, 1);
    setCentralWidget(central);
    buildDocks();
    m_front = addSystem(); // the first system: empty until a source opens
    // /metrics over every live system (traces and empty systems are not observed), off by default.
    m_metrics = new MetricsController([this] {
        std::vector<MetricsSystem> live;
        for (SystemView *system : std::as_const(m_systems))
            if (system->session()->source() == InspectorSession::Source::Live)
                live.push_back(system->telemetry()->metricsSystem());
        return live;
    }, this);
    connect(m_metrics, &MetricsController::statusMessage, statusBar(), &QStatusBar::showMessage);
    buildStatusBar();
    buildMenus();

    m_defaultLayout = saveState(kLayoutVersion);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("layout/geometry")).toByteArray());
    if (!restoreState(settings.value(QStringLiteral("layout/state")).toByteArray(), kLayoutVersion)) {
        // 1400×900, within the screen where the screen can hold the window's minimum (a laptop's
        // 1366×768); the docks are sized for the size the window has when first shown.
        QSize initial(1400, 900);
        if (const QScreen *screen = this->screen()) {
            const QSize available = screen->availableGeometry().size();
            if (available.width() >= 1024 && available.height() >= 640)
                initial = initial.boundedTo(available);
        }
        resize(initial);
        m_sizeDocksOnShow = true;
    }
    swapActions(nullptr, m_front);
    bindFront();
    m_metrics->loadSettings();
}

MainWindow::~MainWindow()
{
    // The systems first: each ends its connection while its panels are still in the docks, and
    // the status bar no longer follows any of them.
    for (const QMetaObject::Connection &c : std::as_const(m_frontConnections))
        disconnect(c);
    const QList<SystemView *> systems = std::exchange(m_systems, {});
    m_front = nullptr;
    qDeleteAll(systems);
}

// ---- misc ------------------------------------------------------------------------------

void MainWindow::updateActionStates()
{
    // Each controller keeps its own actions current from the session's signals; asked again here
    // where the window learns of a change first (a selection, a load's end).
    connection()->updateActionStates();
    traces()->updateActionStates();
    exports()->updateActionStates();
    m_closeSystemAction->setEnabled(m_systems.size() > 1 || session()->source() != InspectorSession::Source::None);
    m_nextSystemAction->setEnabled(m_systems.size() > 1);
    m_previousSystemAction->setEnabled(m_systems.size() > 1);
}

void MainWindow::revealActions()
{
    // Shown and raised over the tabs it shares, the focus left where it is: the operator sees the
    // action go from sent to confirmed without looking for it.
    QDockWidget *actions = dock(QStringLiteral("actionsDock"));
    actions->show();
    actions->raise();
}


QDockWidget *MainWindow::dock(const QString &name) const
{
    return findChild<QDockWidget *>(name);
}

QAction *MainWindow::action(const QString &name) const
{
    for (QAction *a : actions())
        if (a->objectName() == name)
            return a;
    return nullptr;
}

void MainWindow::setTheme(const QString &name)
{
    applyTheme(themeFromName(name));
    QSettings().setValue(QStringLiteral("ui/theme"), name);
    // Views that paint themselves read the palette on their next paint.
    for (QWidget *w : findChildren<QWidget *>())
        w->update();
}

void MainWindow::saveLayout()
{
    QSettings settings;
    settings.setValue(QStringLiteral("layout/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("layout/state"), saveState(kLayoutVersion));
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (std::exchange(m_sizeDocksOnShow, false))
        applyDefaultSizes();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    // A close while the exports' last spans are on their way (this one's own, once they went or
    // the deadline passed, or the operator's second): the window goes.
    if (!m_closingAfterDrain) {
        saveLayout();
        for (SystemView *system : std::as_const(m_systems))
            system->session()->disconnectFromServer(); // also stops a recording and closes its file; an export sends its last batch
        if (telemetryDraining()) {
            // Quitting loses no span a receiver that is up would take: the window waits for the
            // senders' drain, which ends within TelemetryController::kFinishWithinMs.
            m_closingAfterDrain = true;
            statusBar()->showMessage(tr("Sending the last OpenTelemetry spans before closing (at most %1 s)…")
                                         .arg(TelemetryController::kFinishWithinMs / 1000));
            m_drainPoll = new QTimer(this);
            const QDeadlineTimer deadline(TelemetryController::kFinishWithinMs + 500);
            connect(m_drainPoll, &QTimer::timeout, this, [this, deadline] {
                if (telemetryDraining() && !deadline.hasExpired())
                    return;
                close();
            });
            m_drainPoll->start(50);
            event->ignore();
            return;
        }
    }
    if (m_drainPoll) { // the close goes (the senders drained, the deadline passed, or a second close)
        m_drainPoll->stop();
        m_drainPoll->deleteLater(); // this may run in its own timeout
    }
    event->accept();
}

bool MainWindow::telemetryDraining() const
{
    for (const SystemView *system : m_systems)
        if (system->telemetry() && system->telemetry()->isDraining())
            return true;
    // A draining sender lives in the window (TelemetryController::finish()): also the one of a
    // system closed a moment ago, or of a connection another one replaced.
    for (const OtlpHttpSender *sender : findChildren<OtlpHttpSender *>(QString(), Qt::FindDirectChildrenOnly))
        if (sender->isOn() && !sender->isDrained())
            return true;
    return false;
}

} // namespace mapi::ui

