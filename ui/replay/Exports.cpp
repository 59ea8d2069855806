#include "replay/Exports.h"

#include "model/SystemStore.h"
#include "trace/TraceExport.h"

#include <QBuffer>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSet>
#include <QSvgGenerator>

namespace mapi::ui {

namespace {

bool failWith(QString *error, const QString &why)
{
    if (error)
        *error = why;
    return false;
}

// Whether store event `index` concerns one of `agents`: its own agent, or its message's sender
// or one of its recipients.
bool eventInvolves(const SystemStore &store, size_t index, const QSet<QString> &agents)
{
    const EventEntry &e = store.events()[index];
    if (agents.contains(e.agentId))
        return true;
    if (e.messageIndex < 0 || size_t(e.messageIndex) >= store.messages().size())
        return false;
    const Message &m = store.messages()[size_t(e.messageIndex)];
    if (agents.contains(m.fromAgentId))
        return true;
    for (const QString &to : m.toAgentIds)
        if (agents.contains(to))
            return true;
    return false;
}

QString jsonString(const Json &object, const char *key)
{
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

} // namespace

bool exportChromeTrace(const SystemStore &store, const TraceTimeline *timeline, const QStringList &agentIds,
                       const QString &path, qint64 *eventsWritten, QString *error)
{
    ChromeTraceOptions options;
    options.timeline = timeline;
    if (agentIds.isEmpty()) {
        ChromeTraceCounts counts;
        if (!writeChromeTrace(store, path, options, &counts, error))
            return false;
        if (eventsWritten)
            *eventsWritten = counts.instantEvents + counts.taskEvents;
        return true;
    }

    // The exporter writes one instant event per store event, in store order, then one complete
    // event per task: filter its output rather than keep a second exporter in step with it.
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    if (!writeChromeTrace(store, buffer, options, nullptr, error))
        return false;
    Json doc = Json::parse(buffer.data().constBegin(), buffer.data().constEnd(), nullptr, false);
    if (!doc.is_object() || !doc.contains("traceEvents"))
        return failWith(error, QObject::tr("The Chrome trace could not be filtered"));

    const QSet<QString> agents(agentIds.cbegin(), agentIds.cend());
    QSet<int> threads = {0};
    for (const QString &id : agentIds)
        if (const int row = store.agentRow(id); row >= 0)
            threads << row + 1;
    Json kept = Json::array();
    Json metadata = Json::array();
    size_t instantIndex = 0;
    qint64 written = 0;
    for (Json &event : doc["traceEvents"]) {
        const std::string phase = event.value("ph", std::string());
        if (phase == "M") {
            metadata.push_back(std::move(event));
            continue;
        }
        bool keep = false;
        if (phase == "i") {
            keep = instantIndex < store.events().size() && eventInvolves(store, instantIndex, agents);
            ++instantIndex;
        } else if (phase == "X") {
            const Json &args = event["args"];
            keep = agents.contains(jsonString(args, "requester")) || agents.contains(jsonString(args, "assignee"));
        }
        if (keep) {
            threads << event.value("tid", 0);
            kept.push_back(std::move(event));
            ++written;
        }
    }
    Json out = Json::array();
    for (Json &m : metadata)
        if (threads.contains(m.value("tid", 0)))
            out.push_back(std::move(m));
    for (Json &e : kept)
        out.push_back(std::move(e));
    doc["traceEvents"] = std::move(out);
    Json selected = Json::array();
    for (const QString &id : agentIds)
        selected.push_back(id.toStdString());
    doc["otherData"]["agents"] = std::move(selected);

    QSaveFile file(path);
    const QByteArray bytes = QByteArray::fromStdString(doc.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return failWith(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    if (eventsWritten)
        *eventsWritten = written;
    return true;
}

bool exportPicture(const QString &path, const QSize &size, qreal devicePixelRatio, const QString &title,
                   const std::function<void(QPainter &)> &paint, QString *error)
{
    if (size.isEmpty())
        return failWith(error, QObject::tr("The view has no size to export"));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return failWith(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(title);
        svg.setDescription(QObject::tr("Exported by MAP Inspector"));
        QPainter painter(&svg);
        paint(painter);
        painter.end();
    } else {
        QImage image(size * devicePixelRatio, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(devicePixelRatio);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        paint(painter);
        painter.end();
        if (!image.save(&file, "PNG"))
            return failWith(error, QObject::tr("Cannot encode %1 as PNG").arg(path));
    }
    if (!file.commit())
        return failWith(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

} // namespace mapi::ui
