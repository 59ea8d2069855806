#include "replay/SampleTrace.h"

#include <QDir>
#include <QFile>
#include <QSaveFile>
#include <QStandardPaths>

namespace mapi::ui {

QString sampleTraceResource()
{
    return QStringLiteral(":/samples/demo-system.jsonl.zst");
}

QString sampleTraceFile(QString *error)
{
    auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return QString();
    };
    QFile resource(sampleTraceResource());
    if (!resource.open(QIODevice::ReadOnly))
        return fail(QObject::tr("This build carries no sample trace (%1)").arg(resource.fileName()));
    const QByteArray bytes = resource.readAll(); // under 1 MB

    const QString folder = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/samples");
    const QString path = folder + QStringLiteral("/demo-system.jsonl.zst");
    QFile existing(path);
    if (existing.open(QIODevice::ReadOnly) && existing.size() == bytes.size() && existing.readAll() == bytes)
        return path;
    existing.close();
    if (!QDir().mkpath(folder))
        return fail(QObject::tr("Cannot create %1").arg(QDir::toNativeSeparators(folder)));
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit())
        return fail(QObject::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), out.errorString()));
    return path;
}

} // namespace mapi::ui
