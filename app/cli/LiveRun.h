// A live command's connection (map-inspector-cli): the core session without journal or views.
// Main thread only.
#pragma once

#include "CliSupport.h"
#include "common/Redaction.h"
#include "model/SystemStore.h"
#include "session/InspectorSession.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QTimer>

#include <functional>
#include <vector>

namespace mapi::cli {

// A live command on the core session (the window's, without journal or views): connects, runs
// `onLive` once the connection is first live, and returns the exit code that finish() was given.
// An observation (options.reconnect) survives drops: after the first time live, a lost connection
// is reconnected with the client's backoff (the model re-read from a fresh snapshot, the missed
// events replayed where the server can), and each drop is kept in `drops`. The first connection
// fails fast (ConnectionFailed), except with Common::untilStopped, where it is retried too.
class LiveRun
{
public:
    // A connection lost while observing: when, why, and when it was back (0: not by the end).
    struct Drop
    {
        qint64 atMs = 0;
        QString reason;
        qint64 backAtMs = 0;
    };

    // `url`: the system to observe (the first of common.urls when empty).
    explicit LiveRun(const Common &common, const QUrl &url = {})
        : m_options(common.options)
        , m_untilStopped(common.untilStopped)
    {
        if (!url.isEmpty())
            m_options.url = url;
        session.setJournaling(false); // nothing is read back: frames are not kept at all
        session.setMemoryBudget(kCliMemoryBudgetBytes);
        session.store()->setMaxAgents(common.maxAgents);
        // map/auth/expiring: a credential read from a file is read again and handed to the server
        // (whoever renews the token writes the file); otherwise the operator is warned.
        QObject::connect(&session, &InspectorSession::credentialRenewed, &session, [](bool accepted, const QString &why) {
            if (accepted)
                std::fprintf(stderr, "map-inspector-cli: the server accepted the new credential\n");
            else
                std::fprintf(stderr, "map-inspector-cli: %s\n", qPrintable(why));
        });
        QObject::connect(&session, &InspectorSession::credentialExpiring, &session,
                         [this, tokenFile = common.tokenFile](qint64, qint64 expiresInMs) {
            const QString seconds = QString::number(double(expiresInMs) / 1000.0, 'f', 0);
            if (tokenFile.isEmpty()) {
                std::fprintf(stderr, "map-inspector-cli: the server says the credential expires in %s s; give --token-file to "
                                     "renew it without reconnecting\n", qPrintable(seconds));
                return;
            }
            const ErrorOr<QString> token = readTokenFile(tokenFile);
            if (!token || *token == m_options.auth.credential) {
                std::fprintf(stderr, "map-inspector-cli: the credential expires in %s s and %s has no new one%s\n",
                             qPrintable(seconds), qPrintable(tokenFile), token ? "" : qPrintable(QStringLiteral(" (") + token.error() + u')'));
                return;
            }
            m_options.auth.credential = *token;
            session.refreshCredential(*token);
            std::fprintf(stderr, "map-inspector-cli: the credential expires in %s s: sent the new one from %s\n",
                         qPrintable(seconds), qPrintable(tokenFile));
        });
        QObject::connect(&session, &InspectorSession::fatalError, &session, [this](ClientFailure failure, const QString &message) {
            finish(failure == ClientFailure::Transport ? ConnectionFailed
                   : failure == ClientFailure::CredentialInClear ? Usage // the command line must change
                                                                 : AuthRefused,
                   message);
        });
        QObject::connect(&session, &InspectorSession::stateChanged, &session, [this](ClientState state) {
            if (m_finished)
                return;
            const bool lost = state == ClientState::Backoff || state == ClientState::Closed;
            if (state == ClientState::Live && !m_notConnectedSaid.isEmpty()) {
                std::fprintf(stderr, "map-inspector-cli: connected to %s\n", qPrintable(redactedUrl(m_options.url)));
                m_notConnectedSaid.clear();
            }
            if (state == ClientState::Live && !drops.empty() && drops.back().backAtMs == 0) {
                drops.back().backAtMs = QDateTime::currentMSecsSinceEpoch();
                std::fprintf(stderr, "map-inspector-cli: connection back after %.1f s; the model was read again from the server\n",
                             double(drops.back().backAtMs - drops.back().atMs) / 1000.0);
            } else if (lost && !session.hasBeenLive() && m_untilStopped && m_options.reconnect && state == ClientState::Backoff) {
                // Unattended (record without --duration): the system may come up after the
                // collector, so the first connection is retried with the client's backoff
                // (capped at backoffMaxMs, never given up) until a stop signal. Said when the
                // reason changes, not on every attempt. A refused credential is a fatalError and
                // still ends the run.
                const QString error = redactSecrets(session.lastError());
                const QString why = error.isEmpty() ? QStringLiteral("no connection") : error;
                if (why != m_notConnectedSaid) {
                    m_notConnectedSaid = why;
                    std::fprintf(stderr, "map-inspector-cli: cannot connect to %s yet (%s); trying again\n",
                                 qPrintable(redactedUrl(m_options.url)), qPrintable(why));
                }
            } else if (lost && !session.hasBeenLive()) {
                finish(ConnectionFailed, QStringLiteral("cannot connect to %1: %2").arg(redactedUrl(m_options.url), session.lastError()));
            } else if (lost && m_options.reconnect && state == ClientState::Backoff) {
                if (drops.empty() || drops.back().backAtMs != 0) {
                    if (drops.size() == kMaxListedDrops) { // a run of days on a flapping link: the oldest go
                        drops.erase(drops.begin());
                        ++dropsNotListed;
                    }
                    drops.push_back({QDateTime::currentMSecsSinceEpoch(), session.lastError(), 0});
                    std::fprintf(stderr, "map-inspector-cli: connection lost (%s); reconnecting\n", qPrintable(redactSecrets(session.lastError())));
                }
            } else if (state == ClientState::Closed) {
                finish(ConnectionFailed, QStringLiteral("connection lost: %1").arg(session.lastError()));
            }
        });
        // A launched system's stderr (redacted by the client), for the person running the
        // command; with several systems, each line names whose it is.
        const QByteArray childLabel = common.urls.size() > 1 ? QStringLiteral("[%1]").arg(redactedUrl(m_options.url)).toUtf8() : QByteArray("[child]");
        QObject::connect(&session, &InspectorSession::processOutputAdded, &session, [childLabel](const QStringList &lines, qint64 skipped) {
            if (skipped > 0)
                std::fprintf(stderr, "map-inspector-cli: %s … %lld lines not shown: the process wrote faster than they could be kept\n",
                             childLabel.constData(), static_cast<long long>(skipped));
            for (const QString &line : lines)
                std::fprintf(stderr, "map-inspector-cli: %s %s\n", childLabel.constData(), qPrintable(line));
        });
        QObject::connect(&session, &InspectorSession::wentLive, &session, [this] {
            if (onLive && !m_finished)
                onLive();
        });
        QObject::connect(&session, &InspectorSession::recordingFinished, &session,
                         [this](const QStringList &files, qint64 records, const QString &error) {
                             recordedFiles = files;
                             recordedRecords = records;
                             recordingError = error;
                             m_recordingClosed = true;
                             quitWhenDone();
                         });
    }

    SystemStore &store() { return *session.store(); }

    int run()
    {
        session.connectTo(m_options, m_options.observerOnly);
        QCoreApplication::exec();
        return m_exitCode;
    }
    // Starts without running the event loop (several systems observed at once): `done` runs once
    // it finished (exitCode() then holds its code).
    void start(std::function<void()> done)
    {
        m_done = std::move(done);
        session.connectTo(m_options, m_options.observerOnly);
    }
    int exitCode() const { return m_exitCode; }
    QString label() const { return redactedUrl(m_options.url); }
    // Records the connection to `path` from its first frame; false (and `error`) when the file
    // cannot be created.
    int runRecording(const QString &path, const TraceWriterOptions &writerOptions, QString *error)
    {
        if (!session.connectAndRecord(m_options, path, writerOptions, error))
            return OutputUnwritable;
        m_recording = true;
        QCoreApplication::exec();
        return m_exitCode;
    }

    void finish(int code, const QString &message = {})
    {
        if (m_finished)
            return;
        m_finished = true;
        m_exitCode = code;
        error = message;
        session.store()->advanceTime(QDateTime::currentMSecsSinceEpoch());
        session.disconnectFromServer(); // unsubscribes, then closes; a recording closes after that
        // Let the unsubscribe go out, then leave (once a recording's file is closed).
        QTimer::singleShot(300, &session, [this] {
            m_waited = true;
            quitWhenDone();
        });
    }

    // finish(code) once the server's agent list was compared with the model (the end of an
    // observation: a silent or drifted server makes it incomplete), or after the probe's timeout.
    void finishAfterCheck(int code)
    {
        if (m_finished || m_checking)
            return;
        m_checking = true;
        session.reconcileNow([this, code](bool) { finish(code); });
        QTimer::singleShot(m_options.probeTimeoutMs + 2000, &session, [this, code] { finish(code); });
    }

    // No window to protect: the worker decodes at the main thread's priority (InspectorSession).
    InspectorSession session{nullptr, InspectorSession::WorkerPriority::SameAsTheOwner};
    std::function<void()> onLive;
    // The newest kMaxListedDrops drops; dropsNotListed counts the older ones.
    static constexpr size_t kMaxListedDrops = 1000;
    std::vector<Drop> drops;
    qint64 dropsNotListed = 0;
    QString error;
    QStringList recordedFiles;
    qint64 recordedRecords = 0;
    QString recordingError;

private:
    void quitWhenDone()
    {
        if (!m_waited || (m_recording && !m_recordingClosed) || m_doneSaid)
            return;
        m_doneSaid = true;
        if (m_done)
            m_done();
        else
            QCoreApplication::exit(0);
    }

    ClientOptions m_options;
    bool m_untilStopped = false;
    QString m_notConnectedSaid; // the last reason told while the first connection is retried
    bool m_finished = false;
    bool m_checking = false;
    bool m_waited = false;
    bool m_recording = false;
    bool m_recordingClosed = false;
    int m_exitCode = Ok;
    std::function<void()> m_done;
    bool m_doneSaid = false;
};

} // namespace mapi::cli
