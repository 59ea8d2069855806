// Internal to the OTLP import (include only from OtlpImportSpans.h): the span events' texts
// (payloads, ids, recipients, task statuses and agents) kept in a temporary file from the reading
// of the requests until their events are written. Kept in memory they held about 400 MB of a
// 614 MB file (issue 45 item 4); in memory stays an offset and a length per event.
#pragma once

#include <QFile>
#include <QString>
#include <QTemporaryFile>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#ifdef Q_OS_UNIX
#include <unistd.h>
#endif

namespace mapi::otlpimport {

// Where one record is in the spool; offset -1: none (not kept, or the spool failed).
struct SpooledRecord
{
    qint64 offset = -1;
    quint32 bytes = 0;
};

// Records of text fields, appended while the requests are read, then read back in any order. The
// file is made at the first record (an import without span events makes none), stays open (on
// Linux without a name: a crashed import leaves nothing behind) and goes with the spool or
// release(). Once a write or the file's creation failed, error() says why, nothing more is kept,
// and the records not written read as failures: an event is never made of other bytes.
class TextSpool
{
public:
    // Appends one record of `fields` (each written as its length, then its bytes).
    SpooledRecord append(std::initializer_list<std::string_view> fields)
    {
        if (!m_error.isEmpty() || m_reading)
            return {};
        if (!m_file) {
            m_file = std::make_unique<QTemporaryFile>();
            if (!m_file->open())
                return fail(m_file->errorString());
        }
        const size_t start = m_buffer.size();
        for (const std::string_view field : fields) {
            const quint32 length = quint32(std::min<size_t>(field.size(), std::numeric_limits<quint32>::max()));
            m_buffer.append(reinterpret_cast<const char *>(&length), sizeof length);
            m_buffer.append(field.data(), length);
        }
        if (m_buffer.size() - start > std::numeric_limits<quint32>::max()) {
            m_buffer.resize(start);
            return fail(QStringLiteral("a span event's texts beyond 4 GB"));
        }
        const SpooledRecord record{m_written + qint64(start), quint32(m_buffer.size() - start)};
        if (m_buffer.size() >= kBufferBytes && !flush())
            return {};
        return record;
    }

    // Done appending: what is buffered goes to the file, down to the system (QFile's own buffer
    // flushed and checked: a full disk says so here, not as records cut short later). The file is
    // then read a record at a time, in any order (not mapped: mapped pages of hundreds of
    // megabytes would count as the process's memory). false: error().
    bool finishWriting()
    {
        if (m_reading)
            return m_error.isEmpty();
        m_reading = true;
        if (!m_file || !m_file->isOpen()) // no record, or no file could be made
            return m_error.isEmpty();
        if (m_error.isEmpty())
            flush();
        // Also after a failure: what was written before it is still read back.
        if (!m_file->flush() && m_error.isEmpty())
            fail(m_file->errorString());
        std::string().swap(m_buffer);
        return m_error.isEmpty();
    }

    // All read: the file and the read buffer go.
    void release()
    {
        m_file.reset();
        std::string().swap(m_record);
    }

    // One record's fields, after finishWriting(); the views hold until the next read. false when
    // it cannot be read back whole (error() says why).
    bool read(SpooledRecord record, std::vector<std::string_view> &fields)
    {
        fields.clear();
        if (record.offset < 0 || !m_reading || !m_file || !m_file->isOpen())
            return false;
        m_record.resize(record.bytes);
        if (!readAt(record.offset, m_record.data(), record.bytes))
            return false;
        size_t at = 0;
        while (at < m_record.size()) {
            quint32 length = 0;
            if (m_record.size() - at < sizeof length)
                return false;
            std::memcpy(&length, m_record.data() + at, sizeof length);
            at += sizeof length;
            if (m_record.size() - at < length)
                return false;
            fields.emplace_back(m_record.data() + at, length);
            at += length;
        }
        return true;
    }

    // Why records were lost; empty when none was.
    const QString &error() const { return m_error; }

    // For tests: writes fail once the file would pass `bytes` (a full disk).
    void setFailWritesPastForTest(qint64 bytes) { m_failPast = bytes; }

private:
    static constexpr size_t kBufferBytes = 1 << 20;

    bool readAt(qint64 offset, char *into, quint32 bytes)
    {
#ifdef Q_OS_UNIX
        // One system call where seek() and read() make two: a read per event (577,000 on the
        // 1,150,000-event trace), and the two calls alone took about 3 % of the import (perf).
        // Only with a 64-bit off_t: a 32-bit one would wrap past 2 GB and read other bytes.
        if constexpr (sizeof(off_t) >= sizeof(qint64)) {
            errno = 0;
            const ssize_t got = ::pread(m_file->handle(), into, bytes, off_t(offset));
            if (got == ssize_t(bytes))
                return true;
            fail(errno ? qt_error_string(errno) : QStringLiteral("a record is cut short"));
            return false;
        }
#endif
        if (m_file->seek(offset) && m_file->read(into, qint64(bytes)) == qint64(bytes))
            return true;
        fail(m_file->errorString().isEmpty() ? QStringLiteral("a record is cut short") : m_file->errorString());
        return false;
    }

    bool flush()
    {
        const qint64 size = qint64(m_buffer.size());
        const bool simulatedFull = m_failPast >= 0 && m_written + size > m_failPast;
        if (simulatedFull || m_file->write(m_buffer.data(), size) != size) {
            fail(simulatedFull ? QStringLiteral("No space left on device (simulated)") : m_file->errorString());
            return false;
        }
        m_written += size;
        m_buffer.clear();
        return true;
    }

    SpooledRecord fail(const QString &why)
    {
        if (m_error.isEmpty())
            m_error = QStringLiteral("the OTLP import's temporary file: %1; the messages and task changes it held "
                                     "from then on are left out")
                          .arg(why.isEmpty() ? QStringLiteral("it could not be written") : why);
        std::string().swap(m_buffer);
        return {};
    }

    std::unique_ptr<QTemporaryFile> m_file; // written, then read (Unix: through its handle)
    std::string m_buffer; // appended records not yet written, at most about kBufferBytes
    std::string m_record; // the last record read
    qint64 m_written = 0;
    qint64 m_failPast = -1;
    bool m_reading = false;
    QString m_error;
};

} // namespace mapi::otlpimport
