// GUI responsiveness of the whole window.
//
//   bench_gui startup                 time from main() to the window's first paint
//   bench_gui trace FILE              opens a trace in the window: first view, fully loaded,
//                                     longest GUI stall meanwhile, peak RSS
//   bench_gui export FILE             opens a trace, then exports the messages table (CSV) and the
//                                     Chrome trace as File → Export does: time of each, longest
//                                     GUI stall meanwhile
//   bench_gui plot OUT.png TITLE LIMIT_MB NAME=FILE.csv...
//       draws resident memory over time of long-session runs (bench/long-session.sh)
//   bench_gui bars OUT.png TITLE UNIT GOAL SERIES[,SERIES...] LABEL=V[,V...]...
//       draws benchmark figures as horizontal bars, one group per LABEL, one bar per series,
//       and the goal as a dashed line (GOAL 0: none); the figures of docs/benchmarks.md
//   bench_gui stall --url URL | --flood AGENTS RATE [--systems N] [--seconds S] [--memory-budget MB] [--time-travel-at S]
//       connects the window to a MAP server and measures GUI-thread stalls: a 2 ms timer
//       records how late each tick fires; the worst lateness is the longest stall. Every 10 s
//       (and at the end) a line "sample <s> rss_mb <MB> events <n> journal_mb <MB>": the
//       process's resident memory, the events applied and the session journal's size on disk.
//       --time-travel-at S: S seconds in, Replay → Travel back in time; prints how long the
//       journal took to be copied and loaded, a seek to its start, and (5 s later) the way back
//       to live, while the live flood goes on.
//       --flood AGENTS RATE: instead of a server at URL, a synthetic one in a thread of this
//       process (FloodServer.h) with AGENTS agents sending RATE events per second.
//       --systems N (with --flood): N such servers, each a system of its own in the window (the
//       first in front); the memory budget is the window's, split among them. The end adds a
//       line per system: events applied, history kept, its share of the budget.
#include "MainWindow.h"
#include "alerts/AlertMonitor.h"
#include "systems/SystemView.h"
#include "controllers/ConnectionController.h"
#include "controllers/ExportController.h"
#include "controllers/TraceController.h"
#include "trace/TraceTimeline.h"
#include "FloodServer.h"
#include "ProcessStatus.h"
#include "session/InspectorSession.h"
#include "style/Theme.h"
#include "common/VectorStateGuard.h"

#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <cmath>
#include <algorithm>
#include <ctime>
#ifdef Q_OS_LINUX
#include <sys/resource.h>
#endif
#include <cstdio>
#include <memory>
#include <vector>

using namespace mapi;

namespace {
QElapsedTimer g_sinceMain;

class FirstPaint : public QObject
{
public:
    qint64 atMs = -1;
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() == QEvent::Paint && atMs < 0)
            atMs = g_sinceMain.elapsed();
        return false;
    }
};

// The longest GUI-thread stall from start(): a 2 ms timer, and how late its ticks fire.
class StallMeter
{
public:
    StallMeter()
    {
        m_tick.setTimerType(Qt::PreciseTimer);
        m_tick.setInterval(2);
        QObject::connect(&m_tick, &QTimer::timeout, [this] {
            const qint64 now = clock.elapsed();
            m_longest = std::max(m_longest, now - m_last - 2);
            m_last = now;
        });
    }
    void start()
    {
        clock.start();
        m_tick.start();
    }
    qint64 longestMs() const { return m_longest; }
    QElapsedTimer clock; // since start()

private:
    QTimer m_tick;
    qint64 m_longest = 0;
    qint64 m_last = 0;
};
} // namespace

// The GUI thread's last top-level events (start and wall time in ms since main, CPU ms, receiver
// and type), kept when MAPI_BENCH_STALL_ANATOMY_MS is set: a stall that long is printed with the
// events that filled it, so a stall made of many short events can be read too.
struct DeliveredEvent
{
    qint64 startMs = 0;
    qint64 wallMs = 0;
    double cpuMs = 0;
    const char *className = "";
    QString name;
    int type = 0;
    long waits = 0;       // voluntary context switches during it (a lock, I/O)
    long preemptions = 0; // involuntary ones (another thread took the core)
    QString paints;       // the widgets painted inside it for 2 ms or more: "Class wall/CPU ms"
};
std::vector<DeliveredEvent> g_delivered(512);
size_t g_deliveredNext = 0;
const int g_anatomyMs = qEnvironmentVariableIntValue("MAPI_BENCH_STALL_ANATOMY_MS");

// This thread's voluntary and involuntary context switches so far (Linux; elsewhere none).
std::pair<long, long> contextSwitches()
{
#ifdef Q_OS_LINUX
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return {usage.ru_nvcsw, usage.ru_nivcsw};
#else
    return {0, 0};
#endif
}

void printStallAnatomy(qint64 fromMs, qint64 late)
{
    std::printf("stall %lld ms at %.2f s, made of:\n", static_cast<long long>(late), double(fromMs) / 1000.0);
    for (size_t i = 0; i < g_delivered.size(); ++i) {
        const DeliveredEvent &e = g_delivered[(g_deliveredNext + i) % g_delivered.size()];
        if (e.startMs >= fromMs && e.wallMs >= 1)
            std::printf("  +%lld ms: %lld ms (%.1f CPU, %ld waits, %ld preemptions) %s %s type %d%s%s\n",
                        static_cast<long long>(e.startMs - fromMs), static_cast<long long>(e.wallMs), e.cpuMs, e.waits,
                        e.preemptions, e.className, qPrintable(e.name), e.type, e.paints.isEmpty() ? "" : ": painted ",
                        qPrintable(e.paints));
    }
}

// Times every event the GUI thread delivers; with MAPI_BENCH_SLOW_EVENTS_MS=N set, each taking
// N ms or longer is printed (receiver class and name, event type): what a stall was made of.
class TimingApplication : public QApplication
{
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        if ((m_slowMs <= 0 && g_anatomyMs <= 0) || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        // Named before delivery: the receiver may be gone after it (a deleteLater, a finished job).
        const char *className = receiver->metaObject()->className();
        const QString name = receiver->objectName();
        const char *parentClass = receiver->parent() ? receiver->parent()->metaObject()->className() : "-";
        const int type = int(event->type());
        QElapsedTimer timer;
        timer.start();
        const double cpuBefore = threadCpuMs();
        const qint64 startMs = g_sinceMain.elapsed();
        const std::pair<long, long> switchesBefore = g_anatomyMs > 0 && m_depth == 0 ? contextSwitches() : std::pair<long, long>{};
        if (m_depth == 0)
            m_paints.clear();
        ++m_depth;
        const bool result = QApplication::notify(receiver, event);
        --m_depth;
        if (g_anatomyMs > 0 && type == QEvent::Paint && m_depth > 0) {
            if (const qint64 ms = timer.elapsed(); ms >= 2)
                m_paints += QStringLiteral("%1%2 %3/%4 ms")
                                .arg(m_paints.isEmpty() ? QString() : QStringLiteral(", "),
                                     qstrcmp(className, "QWidget") == 0 // a viewport: its view's class
                                         ? QString(QLatin1String(parentClass) + QLatin1String("'s viewport"))
                                         : QString(QLatin1String(className)))
                                .arg(ms)
                                .arg(threadCpuMs() - cpuBefore, 0, 'f', 0);
        }
        if (g_anatomyMs > 0 && m_depth == 0) {
            const std::pair<long, long> switches = contextSwitches();
            g_delivered[g_deliveredNext] = {startMs, timer.elapsed(), threadCpuMs() - cpuBefore, className, name, type,
                                            switches.first - switchesBefore.first, switches.second - switchesBefore.second,
                                            m_paints};
            g_deliveredNext = (g_deliveredNext + 1) % g_delivered.size();
        }
        if (const qint64 ms = timer.elapsed(); m_slowMs > 0 && ms >= m_slowMs)
            std::printf("slow event %lld ms (%.0f ms on the CPU): %s %s (in %s) type %d at %.1f s\n", static_cast<long long>(ms),
                        threadCpuMs() - cpuBefore, className, qPrintable(name), parentClass, type,
                        double(g_sinceMain.elapsed()) / 1000.0);
        return result;
    }

private:
    // This thread's CPU time (ms): a slow event that used little of it waited (a lock, the scheduler).
    static double threadCpuMs()
    {
#ifdef CLOCK_THREAD_CPUTIME_ID
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return double(t.tv_sec) * 1000.0 + double(t.tv_nsec) / 1e6;
#else
        return 0;
#endif
    }
    const int m_slowMs = qEnvironmentVariableIntValue("MAPI_BENCH_SLOW_EVENTS_MS");
    int m_depth = 0;
    QString m_paints; // the current top-level event's paints (anatomy)
};

int main(int argc, char **argv)
{
    g_sinceMain.start();
    TimingApplication app(argc, argv);
    ui::installVectorStateGuard(); // as the application does
    QApplication::setOrganizationName(QStringLiteral("MAP Inspector bench"));
    const QStringList args = QApplication::arguments();
    const QString mode = args.value(1);
    ui::applyTheme(ui::Theme::Light);

    if (mode == QLatin1String("plot")) {
        // bench_gui plot OUT.png TITLE LIMIT_MB NAME=FILE.csv...: resident memory over time of
        // long-session runs (bench/long-session.sh CSVs: seconds in column 1, MB in column 2),
        // one line per file, and the limit as a dashed line.
        const QString out = args.value(2);
        const QString title = args.value(3);
        const double limitMb = args.value(4).toDouble();
        struct Series { QString name; std::vector<QPointF> points; };
        std::vector<Series> series;
        double maxSeconds = 1, maxMb = limitMb * 1.15;
        for (int i = 5; i < args.size(); ++i) {
            const QString spec = args.at(i);
            const qsizetype eq = spec.indexOf(QLatin1Char('='));
            QFile file(spec.mid(eq + 1));
            if (eq < 0 || !file.open(QIODevice::ReadOnly)) {
                std::fprintf(stderr, "plot: cannot read %s\n", qPrintable(spec));
                return 1;
            }
            Series s{spec.left(eq), {}};
            file.readLine(); // the header
            while (!file.atEnd()) {
                const QList<QByteArray> cells = file.readLine().trimmed().split(',');
                if (cells.size() < 2 || cells[1].isEmpty())
                    continue;
                const QPointF p(cells[0].toDouble(), cells[1].toDouble());
                s.points.push_back(p);
                maxSeconds = std::max(maxSeconds, p.x());
                maxMb = std::max(maxMb, p.y() * 1.1);
            }
            series.push_back(std::move(s));
        }
        QImage image(1000, 520, QImage::Format_RGB32);
        image.fill(Qt::white);
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        const QRectF plot(80, 50, 880, 400);
        const auto map = [&](QPointF v) {
            return QPointF(plot.left() + v.x() / maxSeconds * plot.width(), plot.bottom() - v.y() / maxMb * plot.height());
        };
        p.setPen(Qt::black);
        QFont bold = p.font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(0, 10, image.width(), 30), Qt::AlignCenter, title);
        p.setFont(QFont());
        p.drawRect(plot);
        const double mbStep = maxMb > 1000 ? 200 : maxMb > 400 ? 100 : 25;
        for (double mb = 0; mb <= maxMb; mb += mbStep) {
            const QPointF at = map({0, mb});
            p.setPen(QColor(225, 225, 225));
            p.drawLine(QPointF(plot.left(), at.y()), QPointF(plot.right(), at.y()));
            p.setPen(Qt::black);
            p.drawText(QRectF(0, at.y() - 8, 72, 16), Qt::AlignRight | Qt::AlignVCenter, QString::number(mb));
        }
        const double secondStep = maxSeconds > 1800 ? 600 : maxSeconds > 300 ? 60 : 10;
        for (double t = 0; t <= maxSeconds; t += secondStep) {
            const QPointF at = map({t, 0});
            p.drawText(QRectF(at.x() - 30, plot.bottom() + 4, 60, 16), Qt::AlignCenter,
                       secondStep >= 60 ? QStringLiteral("%1 min").arg(t / 60) : QStringLiteral("%1 s").arg(t));
        }
        p.drawText(QRectF(plot.left(), plot.bottom() + 22, plot.width(), 16), Qt::AlignCenter, QStringLiteral("time since connecting"));
        p.save();
        p.translate(16, plot.center().y());
        p.rotate(-90);
        p.drawText(QRectF(-100, -10, 200, 20), Qt::AlignCenter, QStringLiteral("resident memory (MB)"));
        p.restore();
        p.setPen(QPen(QColor(200, 40, 40), 1.5, Qt::DashLine));
        p.drawLine(map({0, limitMb}), map({maxSeconds, limitMb}));
        const QString limitText = QStringLiteral("limit %1 MB").arg(limitMb);
        p.drawText(map({maxSeconds, limitMb}) + QPointF(-6 - p.fontMetrics().horizontalAdvance(limitText), -6), limitText);
        const QColor colors[] = {QColor(31, 119, 180), QColor(44, 160, 44), QColor(255, 127, 14), QColor(148, 103, 189)};
        for (size_t i = 0; i < series.size(); ++i) {
            p.setPen(QPen(colors[i % 4], 2));
            QPolygonF line;
            for (const QPointF &v : series[i].points)
                line << map(v);
            p.drawPolyline(line);
            p.drawLine(QPointF(plot.left() + 16, plot.top() + 18 + 18 * double(i)), QPointF(plot.left() + 40, plot.top() + 18 + 18 * double(i)));
            p.setPen(Qt::black);
            p.drawText(QPointF(plot.left() + 46, plot.top() + 23 + 18 * double(i)), series[i].name);
        }
        p.end();
        if (!image.save(out)) {
            std::fprintf(stderr, "plot: cannot write %s\n", qPrintable(out));
            return 1;
        }
        return 0;
    }
    if (mode == QLatin1String("bars")) {
        const QString out = args.value(2), title = args.value(3), unit = args.value(4);
        const double goal = args.value(5).toDouble();
        const QStringList seriesNames = args.value(6).split(QLatin1Char(','));
        struct Group { QString label; std::vector<double> values; };
        std::vector<Group> groups;
        double maxValue = goal * 1.1;
        for (int i = 7; i < args.size(); ++i) {
            const QString spec = args.at(i);
            const qsizetype eq = spec.lastIndexOf(QLatin1Char('='));
            if (eq <= 0) {
                std::fprintf(stderr, "bars: not LABEL=V[,V...]: %s\n", qPrintable(spec));
                return 1;
            }
            Group g{spec.left(eq), {}};
            for (const QString &v : spec.mid(eq + 1).split(QLatin1Char(','))) {
                g.values.push_back(v.toDouble());
                maxValue = std::max(maxValue, g.values.back() * 1.08);
            }
            groups.push_back(std::move(g));
        }
        if (groups.empty() || maxValue <= 0) {
            std::fprintf(stderr, "bars: nothing to draw\n");
            return 1;
        }
        const double barHeight = 14, groupGap = 12;
        const double groupHeight = barHeight * double(seriesNames.size()) + groupGap;
        const QRectF plot(330, 50, 620, groupHeight * double(groups.size()));
        QImage image(1000, int(plot.bottom() + 80), QImage::Format_RGB32);
        image.fill(Qt::white);
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        const auto x = [&](double v) { return plot.left() + v / maxValue * plot.width(); };
        QFont bold = p.font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(0, 10, image.width(), 30), Qt::AlignCenter, title);
        p.setFont(QFont());
        const double step = std::pow(10.0, std::floor(std::log10(maxValue / 2)));
        const double tick = maxValue / step > 10 ? step * 2 : step;
        for (double v = 0; v <= maxValue; v += tick) {
            p.setPen(QColor(225, 225, 225));
            p.drawLine(QPointF(x(v), plot.top()), QPointF(x(v), plot.bottom()));
            p.setPen(Qt::black);
            p.drawText(QRectF(x(v) - 30, plot.bottom() + 4, 60, 16), Qt::AlignCenter, QString::number(v));
        }
        p.drawText(QRectF(plot.left(), plot.bottom() + 22, plot.width(), 16), Qt::AlignCenter, unit);
        const QColor colors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44), QColor(148, 103, 189)};
        for (size_t g = 0; g < groups.size(); ++g) {
            const double top = plot.top() + groupHeight * double(g) + groupGap / 2;
            p.setPen(Qt::black);
            p.drawText(QRectF(0, top, plot.left() - 8, barHeight * double(seriesNames.size())),
                       Qt::AlignRight | Qt::AlignVCenter, groups[g].label);
            for (size_t k = 0; k < groups[g].values.size() && k < size_t(seriesNames.size()); ++k) {
                const QRectF bar(plot.left(), top + barHeight * double(k), x(groups[g].values[k]) - plot.left(), barHeight - 2);
                p.fillRect(bar, colors[k % 4]);
                p.drawText(QRectF(bar.right() + 4, bar.top() - 1, 80, barHeight), Qt::AlignLeft | Qt::AlignVCenter,
                           QString::number(groups[g].values[k], 'g', 4));
            }
        }
        p.setPen(Qt::black);
        p.drawLine(plot.topLeft(), plot.bottomLeft());
        if (goal > 0) {
            p.setPen(QPen(QColor(200, 40, 40), 1.5, Qt::DashLine));
            p.drawLine(QPointF(x(goal), plot.top() - 6), QPointF(x(goal), plot.bottom()));
            p.drawText(QPointF(x(goal) + 4, plot.top() - 8), QStringLiteral("goal %1").arg(goal));
        }
        double legendX = plot.left();
        for (qsizetype k = 0; k < seriesNames.size(); ++k) {
            const QPointF at(legendX, image.height() - 22);
            p.fillRect(QRectF(at, QSizeF(14, 12)), colors[k % 4]);
            p.setPen(Qt::black);
            p.drawText(at + QPointF(20, 11), seriesNames[k]);
            legendX += 40 + p.fontMetrics().horizontalAdvance(seriesNames[k]);
        }
        p.end();
        if (!image.save(out)) {
            std::fprintf(stderr, "bars: cannot write %s\n", qPrintable(out));
            return 1;
        }
        return 0;
    }
    if (mode == QLatin1String("startup")) {
        ui::MainWindow window;
        FirstPaint firstPaint;
        window.installEventFilter(&firstPaint);
        window.show();
        QElapsedTimer wait;
        wait.start();
        while (firstPaint.atMs < 0 && wait.elapsed() < 5000)
            QApplication::processEvents(QEventLoop::AllEvents, 5);
        std::printf("time to show the window (main() → first paint): %lld ms\n", static_cast<long long>(firstPaint.atMs));
        return 0;
    }
    if (mode == QLatin1String("stall")) {
        const int urlAt = int(args.indexOf(QStringLiteral("--url")));
        const int floodAt = int(args.indexOf(QStringLiteral("--flood")));
        const int secondsAt = int(args.indexOf(QStringLiteral("--seconds")));
        if (urlAt < 0 && floodAt < 0) {
            std::fprintf(stderr, "stall needs --url URL or --flood AGENTS RATE\n");
            return 1;
        }
        const int systemsAt = int(args.indexOf(QStringLiteral("--systems")));
        const int systemCount = systemsAt > 0 ? std::max(1, args.value(systemsAt + 1).toInt()) : 1;
        if (systemCount > 1 && floodAt < 0) {
            std::fprintf(stderr, "--systems needs --flood\n");
            return 1;
        }
        std::vector<std::unique_ptr<FloodServer>> floods;
        QStringList urls;
        if (floodAt > 0) {
            for (int i = 0; i < systemCount; ++i) {
                floods.push_back(std::make_unique<FloodServer>(args.value(floodAt + 1).toInt(), args.value(floodAt + 2).toInt()));
                urls << floods.back()->start();
                if (urls.back().isEmpty()) {
                    for (auto &f : floods)
                        f->stop(); // their threads run: a running QThread must not be destroyed
                    std::fprintf(stderr, "the flood server cannot listen\n");
                    return 1;
                }
            }
        } else {
            urls << args.value(urlAt + 1);
        }
        const double seconds = secondsAt > 0 ? args.value(secondsAt + 1).toDouble() : 20;
        const int budgetAt = int(args.indexOf(QStringLiteral("--memory-budget")));
        ui::MainWindow window;
        window.resize(1600, 1000);
        window.show();
        if (budgetAt > 0)
            window.setMemoryBudget(qint64(args.value(budgetAt + 1).toDouble() * 1024 * 1024));
        for (const QString &url : std::as_const(urls)) {
            ClientOptions options;
            options.url = QUrl(url);
            window.systemForNewSource()->connection()->connectTo(options, true);
        }
        window.showSystem(window.systems().front());

        // Lateness of a 2 ms tick, as a histogram by whole ms (an hour at 500 ticks/s would
        // otherwise grow the bench's own memory), and the five worst with their times.
        std::vector<qint64> lateness(10001, 0);
        qint64 ticks = 0;
        std::vector<std::pair<qint64, qint64>> worst; // (lateness, ms since measuring began)
        QElapsedTimer clock;
        clock.start();
        qint64 last = 0;
        QTimer tick;
        tick.setTimerType(Qt::PreciseTimer);
        tick.setInterval(2);
        QObject::connect(&tick, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            if (last) {
                const qint64 late = std::max<qint64>(0, now - last - 2);
                if (g_anatomyMs > 0 && late >= g_anatomyMs)
                    printStallAnatomy(g_sinceMain.elapsed() - (now - last), late);
                ++lateness[size_t(std::min<qint64>(late, 10000))];
                ++ticks;
                if (worst.size() < 5 || late > worst.back().first) {
                    worst.emplace_back(late, now - 2000);
                    std::sort(worst.begin(), worst.end(), std::greater<>());
                    if (worst.size() > 5)
                        worst.pop_back();
                }
            }
            last = now;
        });
        // Measure after the first snapshot has arrived (the connect itself is not the subject).
        QTimer::singleShot(2000, [&] {
            tick.start();
            last = 0;
        });
        QElapsedTimer sinceConnect;
        sinceConnect.start();
        const auto sample = [&] {
            qint64 journalBytes = 0;
            const QString folder = window.session()->journalFolder();
            if (!folder.isEmpty())
                for (const QFileInfo &f : QDir(folder).entryInfoList({QStringLiteral("*.zst")}, QDir::Files))
                    journalBytes += f.size();
            const SystemStore *store = window.session()->store();
            std::printf("sample %.0f rss_mb %.1f events %lld journal_mb %.1f history_mb %.1f kept %zu trimmed %lld\n",
                        double(sinceConnect.elapsed()) / 1000.0, double(statusKb("VmRSS:")) / 1024.0,
                        static_cast<long long>(store->counters().eventsApplied), double(journalBytes) / (1024.0 * 1024.0),
                        double(store->historyBytes()) / (1024.0 * 1024.0), store->events().keptCount(),
                        static_cast<long long>(store->historyTrim().events));
            std::fflush(stdout);
        };
        const int travelAt = int(args.indexOf(QStringLiteral("--time-travel-at")));
        QElapsedTimer travel;
        if (travelAt > 0) {
            InspectorSession *session = window.session();
            QObject::connect(session, &InspectorSession::timeTravelReady, &app, [&, session](bool ok, const QString &error) {
                if (!ok) {
                    std::printf("time travel failed: %s\n", qPrintable(error));
                    return;
                }
                const qint64 loadMs = travel.elapsed();
                QElapsedTimer seek;
                seek.start();
                session->replay()->seek(session->replay()->startMs());
                std::printf("time travel: journal of %lld records copied and loaded in %lld ms (%.0f records/s); "
                            "seek to its start %lld ms; the past holds %lld events, the live model %lld\n",
                            static_cast<long long>(session->replay()->timeline().recordCount()),
                            static_cast<long long>(loadMs), double(session->replay()->timeline().recordCount()) * 1000.0 / double(std::max<qint64>(1, loadMs)),
                            static_cast<long long>(seek.elapsed()),
                            static_cast<long long>(session->store()->counters().eventsApplied),
                            static_cast<long long>(session->liveStore()->counters().eventsApplied));
                std::fflush(stdout);
                QTimer::singleShot(5000, &app, [session] {
                    QElapsedTimer back;
                    back.start();
                    session->returnToLive();
                    std::printf("back to live in %lld ms: %lld events\n", static_cast<long long>(back.elapsed()),
                                static_cast<long long>(session->store()->counters().eventsApplied));
                    std::fflush(stdout);
                });
            });
            QTimer::singleShot(int(2000 + args.value(travelAt + 1).toDouble() * 1000), &app, [&window, &travel] {
                travel.start();
                window.findChild<QAction *>(QStringLiteral("timeTravel"))->trigger();
            });
        }
        QTimer sampler;
        sampler.setInterval(10000);
        QObject::connect(&sampler, &QTimer::timeout, sample);
        sampler.start();
        QTimer::singleShot(int(2000 + seconds * 1000), &app, [&] {
            tick.stop(); // the measured time ends here: the last sample (a walk of the journal) is the bench's own
            sample();
            QApplication::quit();
        });
        QApplication::exec();
        const auto pct = [&](double p) {
            const qint64 wanted = qint64(p * double(std::max<qint64>(0, ticks - 1)));
            qint64 seen = 0;
            for (size_t ms = 0; ms < lateness.size(); ++ms)
                if ((seen += lateness[ms]) > wanted)
                    return qint64(ms);
            return qint64(0);
        };
        const SystemStore *store = window.session()->store();
        std::printf("GUI-thread stalls over %.0f s: ticks %lld, p50 %lld ms, p99 %lld ms, max %lld ms; "
                    "events applied %lld, agents %zu, messages %zu\n",
                    seconds, static_cast<long long>(ticks), static_cast<long long>(pct(0.5)), static_cast<long long>(pct(0.99)),
                    static_cast<long long>(worst.empty() ? 0 : worst.front().first),
                    static_cast<long long>(store->counters().eventsApplied), store->agents().size(), store->messages().size());
        for (size_t i = 0; i < floods.size(); ++i) {
            floods[i]->stop();
            const InspectorSession *session = window.systems().at(qsizetype(i))->session();
            std::printf("flood server %zu: %lld events sent in %.0f s (%.0f/s offered); applied %.0f/s; history %.1f MB of "
                        "its %.0f MB share (budget %.0f MB); detectors: %lld evaluations, %lld messages unread at the end\n",
                        i + 1, static_cast<long long>(floods[i]->framesSent()), seconds + 2,
                        double(floods[i]->framesSent()) / (seconds + 2),
                        double(session->store()->counters().eventsApplied) / (seconds + 2),
                        double(session->store()->historyBytes()) / (1024.0 * 1024.0),
                        double(session->store()->historyBudget()) / (1024.0 * 1024.0),
                        double(session->memoryBudget()) / (1024.0 * 1024.0),
                        static_cast<long long>(window.systems().at(qsizetype(i))->alertMonitor()->evaluationCount()),
                        static_cast<long long>(window.systems().at(qsizetype(i))->alertMonitor()->unreadMessages()));
        }
        std::printf("longest stalls (ms, at s):");
        for (size_t i = 0; i < std::min<size_t>(5, worst.size()); ++i)
            std::printf(" %lld@%.1f", static_cast<long long>(worst[i].first), double(worst[i].second) / 1000.0);
        std::printf("\n");
        return 0;
    }
    if (mode == QLatin1String("trace")) {
        // The window opens a trace (as File → Open does): time to the first view (the first
        // change the store announces), time to fully loaded (traceLoadFinished, after which the
        // panels rebuild), the longest GUI-thread stall meanwhile, and the process's peak RSS.
        const QString path = args.value(2);
        ui::MainWindow window;
        window.resize(1600, 1000);
        window.show();
        for (int i = 0; i < 20; ++i)
            QApplication::processEvents(QEventLoop::AllEvents, 5);
        const qint64 emptyWindowKb = statusKb("VmRSS:"); // Qt, fonts, the panels without data
        InspectorSession *session = window.session();
        const SystemStore *store = session->store();
        StallMeter stalls;
        const QElapsedTimer &clock = stalls.clock;
        qint64 firstViewMs = -1;
        qint64 loadedMs = -1;
        QObject::connect(store, &SystemStore::changed, [&] {
            if (firstViewMs < 0)
                firstViewMs = clock.elapsed();
        });
        bool ok = false;
        QString error;
        QObject::connect(session, &InspectorSession::traceLoadFinished, [&](bool done, bool, const QString &why) {
            loadedMs = clock.elapsed();
            ok = done;
            error = why;
            // One more second of ticks: the panels rebuild after the load (stalls count too).
            QTimer::singleShot(1000, &app, &QApplication::quit);
        });
        stalls.start();
        session->openTrace(path);
        QApplication::exec();
        if (!ok) {
            std::fprintf(stderr, "cannot load %s: %s\n", qPrintable(path), qPrintable(error));
            return 1;
        }
        const qint64 hwmKb = statusKb("VmHWM:");
        const qint64 afterKb = statusKb("VmRSS:"); // a second after the load: what stays
        const double events = std::max(1.0, double(store->events().size()));
        const double traceBytes = double(hwmKb - emptyWindowKb) * 1024.0 - double(QFileInfo(path).size());
        std::printf("window: %lld events, %zu agents, %zu messages; first view %lld ms, fully loaded %lld ms, "
                    "longest GUI stall %lld ms; peak RSS %.1f MB (%.0f B/event; the empty window %.1f MB, the trace "
                    "beyond it and the file %.0f B/event; a second after the load %.1f MB, %.0f B/event beyond the "
                    "empty window)\n",
                    static_cast<long long>(store->events().size()), store->agents().size(), store->messages().size(),
                    static_cast<long long>(firstViewMs), static_cast<long long>(loadedMs),
                    static_cast<long long>(stalls.longestMs()), double(hwmKb) / 1024.0, double(hwmKb) * 1024.0 / events,
                    double(emptyWindowKb) / 1024.0, traceBytes / events, double(afterKb) / 1024.0,
                    double(afterKb - emptyWindowKb) * 1024.0 / events);
        return 0;
    }
    if (mode == QLatin1String("export")) {
        const QString path = args.value(2);
        ui::MainWindow window;
        window.resize(1600, 1000);
        window.show();
        InspectorSession *session = window.session();
        bool loaded = false;
        QObject::connect(session, &InspectorSession::traceLoadFinished, [&](bool done, bool, const QString &) {
            loaded = done;
            QTimer::singleShot(1000, &app, &QApplication::quit); // the panels settle
        });
        session->openTrace(path);
        QApplication::exec();
        if (!loaded) {
            std::fprintf(stderr, "cannot load %s\n", qPrintable(path));
            return 1;
        }
        QTemporaryDir dir;
        const struct { const char *name; ui::ExportController::Kind kind; const char *file; } exports[] = {
            {"messages table (CSV)", ui::ExportController::Kind::MessagesCsv, "messages.csv"},
            {"Chrome trace", ui::ExportController::Kind::ChromeTrace, "trace.json"},
        };
        for (const auto &e : exports) {
            StallMeter stalls;
            bool ok = false;
            QString error;
            const QMetaObject::Connection c = QObject::connect(window.exports(), &ui::ExportController::exportFinished,
                                                              [&](bool done, const QString &why) {
                ok = done;
                error = why;
                app.quit();
            });
            const QString out = dir.filePath(QString::fromLatin1(e.file));
            stalls.start();
            window.exports()->exportTo(e.kind, out);
            QApplication::exec();
            const qint64 ms = stalls.clock.elapsed();
            QObject::disconnect(c);
            if (!ok) {
                std::fprintf(stderr, "%s failed: %s\n", e.name, qPrintable(error));
                return 1;
            }
            std::printf("export %s: %lld ms, %.1f MB, longest GUI stall %lld ms\n", e.name, static_cast<long long>(ms),
                        double(QFileInfo(out).size()) / 1e6, static_cast<long long>(stalls.longestMs()));
        }
        return 0;
    }
    std::fprintf(stderr, "usage: bench_gui startup | stall --url URL [--seconds S] | trace FILE | export FILE\n");
    return 1;
}
