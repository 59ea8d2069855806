// Memory figures of the benchmark's own process.
#pragma once

#include <QByteArray>
#include <QFile>

// A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:"; Linux; -1 elsewhere).
inline qint64 statusKb(const char *key)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray k(key);
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(k))
            return line.mid(k.size()).trimmed().split(' ').value(0).toLongLong();
    return -1;
}
