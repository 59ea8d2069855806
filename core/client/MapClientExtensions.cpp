// MapClient's reading of what a server keeps beyond the core, after each snapshot: the
// conversations of a server that advertises capabilities.mail (mail/list, then mail/get,
// mail/thread/list and mail/turns/list of each), and trajectory checkpoints where
// trajectory/list answers (nothing advertises it; a -32601 marks it absent). Reads only. The
// answers reach the model through the pipeline like every frame (ExtensionPage), so a recorded
// trace replays them. Same thread as the client.
#include "client/MapClient.h"

namespace mapi {

namespace {

// Bounded: a server with a million conversations costs at most these requests per connection.
constexpr int kConversationPageSize = 50;
constexpr int kConversationMaxPages = 20;      // 1,000 conversations listed
constexpr int kConversationsRead = 100;        // of which the first 100 read in full
constexpr int kTurnsPerConversation = 500;     // each one's first 500 turns (the live ones follow)
constexpr int kCheckpointPageSize = 200;
constexpr int kCheckpointMaxPages = 10;        // 2,000 checkpoints

} // namespace

void MapClient::noteExtensions(const Json &connectResult)
{
    const Json *caps = jsonChild(connectResult, "capabilities");
    const Json *mail = caps ? jsonChild(*caps, "mail") : nullptr;
    const Json *enabled = mail ? jsonChild(*mail, "enabled") : nullptr;
    m_mailAdvertised = enabled && enabled->is_boolean() && enabled->get<bool>();
}

void MapClient::readExtensionHistory()
{
    if (m_mailAdvertised)
        listConversations(QString(), 0, {});
    if (support(QStringLiteral("trajectory/list")) != Support::Absent)
        listCheckpoints(QString(), 0);
    readFederation();
}

void MapClient::readFederation()
{
    m_lastFederationReadMs = nowMs();
    const QString list = QStringLiteral("map/federation/list");
    const QString buffer = QStringLiteral("map/federation/buffer/stats");
    if (support(list) == Support::Absent) { // -32601 once: never asked again on this server
        m_federationServed = false;
        return;
    }
    // The buffer once the list answered: one request at a time (a server on a stream whose writes
    // collide, the SDK's over stdio, fails two answers in one tick). Refused or failed: asked
    // again at the next snapshot only (a timeout is no answer: asked again in 10 s). The answers
    // and errors reach the model through the pipeline (FederationLedger).
    request(list, Json::object(), [this, buffer](bool ok, const Json &, const RpcError &error) {
        if (ok || error.code != kTimeoutCode)
            m_federationServed = ok;
        if (ok && support(buffer) != Support::Absent)
            request(buffer, Json::object(), {});
    });
}

void MapClient::listConversations(const QString &cursor, int page, QStringList ids)
{
    Json params = {{"limit", kConversationPageSize}};
    if (!cursor.isEmpty())
        params["cursor"] = cursor.toStdString();
    request(QStringLiteral("mail/list"), params, [this, page, ids](bool ok, const Json &result, const RpcError &) mutable {
        if (!ok)
            return; // the pipeline reports it (observationLossOf)
        if (const Json *list = jsonChild(result, "conversations"); list && list->is_array())
            for (const Json &c : *list)
                if (const QString id = jsonString(c, "id"); !id.isEmpty())
                    ids << id;
        const QString next = jsonString(result, "nextCursor");
        const Json *more = jsonChild(result, "hasMore");
        if (more && more->is_boolean() && more->get<bool>() && !next.isEmpty() && page + 1 < kConversationMaxPages) {
            listConversations(next, page + 1, ids);
            return;
        }
        for (const QString &id : ids.mid(0, kConversationsRead)) {
            const std::string conversation = id.toStdString();
            request(QStringLiteral("mail/get"),
                    Json{{"conversationId", conversation},
                         {"include", {{"participants", true}, {"threads", true}, {"stats", true}}}},
                    {});
            request(QStringLiteral("mail/thread/list"), Json{{"conversationId", conversation}}, {});
            request(QStringLiteral("mail/turns/list"), Json{{"conversationId", conversation}, {"limit", kTurnsPerConversation}}, {});
        }
    });
}

void MapClient::listCheckpoints(const QString &cursor, int page)
{
    Json params = {{"limit", kCheckpointPageSize}};
    if (!cursor.isEmpty())
        params["cursor"] = cursor.toStdString();
    request(QStringLiteral("trajectory/list"), params, [this, page](bool ok, const Json &result, const RpcError &) {
        const QString next = ok ? jsonString(result, "nextCursor") : QString();
        const Json *more = ok ? jsonChild(result, "hasMore") : nullptr;
        if (more && more->is_boolean() && more->get<bool>() && !next.isEmpty() && page + 1 < kCheckpointMaxPages)
            listCheckpoints(next, page + 1);
    });
}

} // namespace mapi
