// What the exports of a loaded model share (ModelExport.cpp, CsvExport.cpp): buffered output,
// and a file written whole or not at all. Internal to core/trace.
#pragma once

#include <QIODevice>
#include <QSaveFile>

#include <cstring>

namespace mapi {

// Buffers output and writes it in large pieces.
class Output
{
public:
    explicit Output(QIODevice &device)
        : m_device(device)
    {
        m_buffer.reserve(kFlushAt + 64 * 1024);
    }
    void append(const QByteArray &text)
    {
        m_buffer.append(text);
        if (m_buffer.size() >= kFlushAt)
            flush();
    }
    void append(const char *text) { append(QByteArray::fromRawData(text, qsizetype(std::strlen(text)))); }
    bool flush()
    {
        if (!m_buffer.isEmpty() && m_device.write(m_buffer) != m_buffer.size())
            m_failed = true;
        m_buffer.clear();
        return !m_failed;
    }
    bool failed() const { return m_failed; }

private:
    static constexpr qsizetype kFlushAt = 1 << 20;
    QIODevice &m_device;
    QByteArray m_buffer;
    bool m_failed = false;
};

template <typename Writer>
inline bool toFile(const QString &path, QString *error, Writer &&write)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    if (!write(file))
        return false;
    if (!file.commit()) {
        if (error)
            *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace mapi
