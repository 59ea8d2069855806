#include "panels/ConnectionsPanel.h"

#include "common/TableSetup.h"
#include "common/TimeText.h"
#include "session/InspectorSession.h"
#include "trace/Trace.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPointer>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QPaintEvent>
#include <QVBoxLayout>

#include <cmath>

namespace mapi::ui {

// The lanes: one row per connection, time left to right over the whole trace.
class ConnectionLanes : public QWidget
{
public:
    static constexpr int kRowHeight = 24;
    static constexpr int kLabelWidth = 200;
    static constexpr int kAxisHeight = 18;

    explicit ConnectionLanes(QWidget *parent)
        : QWidget(parent)
    {
        setObjectName(QStringLiteral("connectionLanes"));
        setMinimumHeight(kAxisHeight + kRowHeight);
    }
    void setConnections(const TapConnections *connections)
    {
        m_connections = connections;
        setMinimumHeight(kAxisHeight + kRowHeight * std::max<int>(1, int(connections->connections().size())));
        update();
    }

protected:
    void paintEvent(QPaintEvent *event) override
    {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        if (!m_connections || m_connections->connections().empty() || m_connections->firstMs() < 0)
            return;
        const TapConnections &all = *m_connections;
        const qint64 first = all.firstMs();
        const qint64 span = std::max<qint64>(1, all.lastMs() - first);
        const int left = kLabelWidth;
        const int width = std::max(1, this->width() - left - 8);
        const auto xOf = [&](qint64 ms) {
            const qint64 at = std::clamp<qint64>(ms, first, first + span); // TapConnections clamps to [0, 2100]
            return left + int(double(at - first) / double(span) * width);
        };
        // The axis: five times on this computer's clock (the tap stamped them).
        p.setPen(palette().color(QPalette::Text));
        for (int i = 0; i <= 4; ++i) {
            const qint64 ms = first + span / 4 * i;
            const int x = xOf(ms);
            p.drawLine(x, kAxisHeight - 4, x, kAxisHeight);
            const QString text = timeOfDay(ms, span < 10000 ? TimePrecision::Milliseconds : TimePrecision::Seconds, Clock::Local);
            const int w = p.fontMetrics().horizontalAdvance(text);
            p.drawText(std::max(left, std::min(x - w / 2, this->width() - w - 2)), kAxisHeight - 6, text);
        }
        const QColor sentColor(52, 101, 164);
        const QColor receivedColor(78, 154, 6);
        const QColor errorColor(204, 0, 0);
        const QColor band = palette().color(QPalette::AlternateBase);
        // Only the rows in the area to paint (a lane is some 500 buckets; thousands of them scroll).
        const int firstRow = std::max(0, (event->rect().top() - kAxisHeight) / kRowHeight);
        const int lastRow = std::min(int(all.connections().size()) - 1, (event->rect().bottom() - kAxisHeight) / kRowHeight);
        for (int row = firstRow; row <= lastRow; ++row) {
            const TapConnection &c = all.connections()[size_t(row)];
            const int top = kAxisHeight + row * kRowHeight;
            const int middle = top + kRowHeight / 2;
            // Connected: a band from open to close (to the end of the trace while open).
            const int x0 = xOf(c.openedMs >= 0 ? c.openedMs : first);
            const int x1 = xOf(c.closedMs >= 0 ? c.closedMs : all.lastMs());
            p.fillRect(QRect(x0, top + 2, std::max(1, x1 - x0), kRowHeight - 4), band);
            p.setPen(palette().color(QPalette::Text));
            const QString label = QStringLiteral("#%1 %2").arg(c.conn).arg(c.who);
            p.drawText(QRect(4, top, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
                       p.fontMetrics().elidedText(label, Qt::ElideRight, kLabelWidth - 8));
            // Activity: bars on a log scale, the busiest pixel's count for each pixel column.
            const auto height = [](quint32 n) { return n ? std::min(kRowHeight / 2 - 2, 2 + int(std::log2(double(n)) * 1.5)) : 0; };
            for (size_t b = 0; b < c.buckets.size(); ++b) {
                const TapActivityBucket &bucket = c.buckets[b];
                if (!bucket.sent && !bucket.received)
                    continue;
                const qint64 start = first + (c.firstBucket + qint64(b)) * all.bucketMs(); // within [0, 2100]: no overflow
                const int x = xOf(start);
                const int w = std::max(1, xOf(start + all.bucketMs()) - x);
                if (bucket.sent)
                    p.fillRect(QRect(x, middle - height(bucket.sent), w, height(bucket.sent)), sentColor);
                if (bucket.received)
                    p.fillRect(QRect(x, middle, w, height(bucket.received)), receivedColor);
                if (bucket.errors)
                    p.fillRect(QRect(x, top + 2, std::max(2, w), kRowHeight - 4), errorColor);
            }
            if (c.closedMs >= 0) {
                const bool clean = c.closeText.startsWith(QLatin1String("code 1000")) || c.closeText.startsWith(QLatin1String("code 1001"));
                p.setPen(QPen(clean ? palette().color(QPalette::Mid) : errorColor, 2));
                p.drawLine(x1, top + 2, x1, top + kRowHeight - 2);
            }
        }
    }

private:
    const TapConnections *m_connections = nullptr;
};

namespace {

enum Column { Conn, Who, Address, Opened, Closed, Close, Sent, Received, Requests, Errors, Events, Notes, ColumnCount };

QString timeCell(qint64 ms)
{
    return ms < 0 ? QString() : timeOfDay(ms, TimePrecision::Milliseconds, Clock::Local);
}

} // namespace

ConnectionsPanel::ConnectionsPanel(InspectorSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
{
    m_header = new QLabel(this);
    m_lanes = new ConnectionLanes(this);
    m_lanesArea = new QScrollArea(this);
    m_table = new QTableWidget(this);
    m_header->setObjectName(QStringLiteral("connectionsHeader"));
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::PlainText); // a trace's addresses and notes are not markup
    m_header->setText(tr("Open a tap's trace (map-inspector-cli tap --out FILE) to see one lane per connection here."));
    m_lanesArea->setWidget(m_lanes);
    m_lanesArea->setWidgetResizable(true);
    m_table->setObjectName(QStringLiteral("connectionsTable"));
    m_table->setColumnCount(ColumnCount);
    m_table->setHorizontalHeaderLabels({tr("Conn"), tr("Who"), tr("Address"), tr("Connected"), tr("Left"), tr("How it left"), tr("Sent"),
                                        tr("Received"), tr("Requests"), tr("Errors"), tr("Events"), tr("Notes")});
    setUpReadOnlyTable(m_table, QAbstractItemView::SingleSelection, Notes);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Conn, Qt::AscendingOrder); // in the lanes' order until the operator sorts
    m_split = new QSplitter(Qt::Vertical, this);
    m_split->addWidget(m_lanesArea);
    m_split->addWidget(m_table);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_header);
    layout->addWidget(m_split, 1);
    connect(session, &InspectorSession::sourceReplaced, this, &ConnectionsPanel::clearShown);
    m_liveTimer.setInterval(kLiveRefreshMs);
    connect(&m_liveTimer, &QTimer::timeout, this, [this] {
        if (!m_live || !isVisible())
            return; // hidden: nothing to refresh (the picture is taken when it shows again)
        // The recorder publishes a new picture only when something happened: the same one is not
        // shown again (every row of the table would be rebuilt for nothing).
        if (std::shared_ptr<const TapConnections> now = m_live(); now && now != m_lastLive) {
            m_lastLive = std::move(now);
            showConnections(*m_lastLive, QString());
        }
    });
    connect(session, &InspectorSession::traceLoadFinished, this, [this](bool ok, bool, const QString &) { traceLoaded(ok); });
}

ConnectionsPanel::~ConnectionsPanel()
{
    stopReading();
}

QWidget *ConnectionsPanel::lanes() const
{
    return m_lanes;
}

void ConnectionsPanel::clearShown()
{
    stopReading();
    m_live = nullptr;
    m_lastLive.reset();
    m_liveTimer.stop();
    m_connections = {};
    m_listen.clear();
    m_upstream.clear();
    m_lanes->setConnections(&m_connections);
    m_table->setRowCount(0);
    m_splitSized = false;
    m_header->setText(tr("Open a tap's trace (map-inspector-cli tap --out FILE) to see one lane per connection here."));
    setAvailable(false);
}

void ConnectionsPanel::setAvailable(bool available)
{
    if (available == m_available)
        return;
    m_available = available;
    Q_EMIT availabilityChanged(available);
}

void ConnectionsPanel::followLive(std::function<std::shared_ptr<const TapConnections>()> snapshot, const QString &listen,
                                  const QString &upstream)
{
    stopReading();
    m_live = std::move(snapshot);
    m_listen = listen;
    m_upstream = upstream;
    setAvailable(true);
    m_lastLive = m_live();
    showConnections(m_lastLive ? *m_lastLive : TapConnections(), QString());
    m_liveTimer.start();
}

void ConnectionsPanel::stopReading()
{
    if (QThread *reader = std::exchange(m_reader, nullptr)) {
        m_cancel->store(true); // it stops at its next record, and says nothing more
        reader->wait();
        delete reader;
    }
}

void ConnectionsPanel::traceLoaded(bool ok)
{
    stopReading();
    const Json &header = m_session->traceStats().header;
    const bool tap = ok && header.is_object() && header.contains("tap");
    setAvailable(tap);
    if (!tap)
        return;
    const Json *about = jsonChild(header, "tap");
    m_listen = about && about->is_object() ? jsonString(*about, "listen") : QString(); // never throws on a hostile header
    m_upstream = jsonString(header, "url");
    m_header->setText(tr("Reading the tap's connections…"));
    const QString path = m_session->tracePath();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    QPointer<ConnectionsPanel> self(this);
    m_reader = QThread::create([path, cancel = m_cancel, self] {
        TapConnections connections;
        TraceReadStats stats;
        QString error;
        TraceReadOptions options;
        options.cancel = cancel.get();
        readTrace(path, [&](const TraceRecord &r) { connections.add(r); return true; }, stats, &error, options);
        if (cancel->load())
            return;
        QMetaObject::invokeMethod(self, [self, cancel, connections = std::move(connections), error]() mutable {
            if (self && !cancel->load()) // not a reading stopped since (another source, a live tap)
                self->showConnections(std::move(connections), error);
        }, Qt::QueuedConnection);
    });
    m_reader->start();
}

void ConnectionsPanel::showConnections(TapConnections connections, const QString &error)
{
    m_connections = std::move(connections);
    QString text = (m_live ? tr("A running tap: %n connection(s) so far through %1 to %2.", nullptr, int(m_connections.connections().size()))
                           : tr("A tap's trace: %n connection(s) through %1 to %2.", nullptr, int(m_connections.connections().size())))
                       .arg(m_listen, m_upstream)
        + tr(" Above the line what each sent, below what it received; red: the server's errors; a band while connected.");
    if (m_connections.recordsNotFollowed() > 0)
        text += tr(" Connections past the first %1 are not shown (%2 of their records).")
                    .arg(TapConnections::kMaxConnections).arg(m_connections.recordsNotFollowed());
    for (const QString &note : m_connections.notes())
        text += QLatin1Char(' ') + note;
    if (!error.isEmpty())
        text += tr(" Reading stopped early: %1").arg(error);
    m_header->setText(text);
    m_lanes->setConnections(&m_connections);
    // Columns fit their text when connections arrive (a new one's name is known once it said
    // who it is); otherwise the operator's widths stand.
    const bool grows = m_table->rowCount() < int(m_connections.connections().size());
    // The selected connection stays selected across a refresh (rows are rebuilt).
    const QList<QTableWidgetItem *> selected = m_table->selectedItems();
    const qint64 selectedConn = selected.isEmpty() ? -1 : m_table->item(selected.first()->row(), Conn)->data(Qt::DisplayRole).toLongLong();
    const int sortColumn = m_table->horizontalHeader()->sortIndicatorSection();
    const Qt::SortOrder sortOrder = m_table->horizontalHeader()->sortIndicatorOrder();
    m_table->setSortingEnabled(false);
    m_table->setRowCount(int(m_connections.connections().size()));
    int row = 0;
    for (const TapConnection &c : m_connections.connections()) {
        const auto set = [&](int column, const QString &value) { m_table->setItem(row, column, new QTableWidgetItem(value)); };
        const auto number = [&](int column, qint64 value) {
            auto *item = new QTableWidgetItem;
            item->setData(Qt::DisplayRole, value);
            m_table->setItem(row, column, item);
        };
        number(Conn, c.conn);
        set(Who, c.role.isEmpty() || c.role == c.who ? c.who : QStringLiteral("%1 (%2)").arg(c.who, c.role));
        set(Address, c.url);
        set(Opened, timeCell(c.openedMs));
        set(Closed, c.closedMs < 0 ? tr("still connected") : timeCell(c.closedMs));
        set(Close, c.closedBy.isEmpty() ? c.closeText : QStringLiteral("%1, %2").arg(c.closedBy, c.closeText));
        number(Sent, c.sent);
        number(Received, c.received);
        number(Requests, c.requests);
        number(Errors, c.errors);
        number(Events, c.notifications);
        set(Notes, c.notes.join(QLatin1Char(' ')));
        ++row;
    }
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(sortColumn, sortOrder);
    if (selectedConn >= 0)
        for (int r = 0; r < m_table->rowCount(); ++r)
            if (m_table->item(r, Conn)->data(Qt::DisplayRole).toLongLong() == selectedConn)
                m_table->selectRow(r);
    if (grows)
        m_table->resizeColumnsToContents();
    Q_EMIT connectionsRead();
    fitLanes();
}

void ConnectionsPanel::fitLanes()
{
    if (m_splitSized || m_connections.connections().empty())
        return; // the operator's splitter stands
    // Every lane in sight when they fit in two thirds of the panel; the table takes the rest.
    if (const int total = m_split->height(); total >= 120) { // else not laid out yet: when it is (resizeEvent)
        const int lanes = std::min(m_lanes->minimumHeight() + 2 * m_lanesArea->frameWidth() + 2, total * 2 / 3);
        m_split->setSizes({lanes, total - lanes});
        m_splitSized = true;
    }
}

void ConnectionsPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitLanes();
}

} // namespace mapi::ui
