// MapClient's walk of map/agents/list: the snapshot's and each reconciliation's agent list.
// MAPServer and the SDK's TestServer answer every agent at once; a server that pages (the spec's
// `nextCursor`) is read page by page, each page asked only when the last one came. The pipeline
// holds the pages and applies them as one list (ProtocolPipeline::interpretAgentList), so the
// reconciliation compares the whole list with the model. No `limit` is sent: a server that honours
// it without giving a cursor would pass a page off as the whole list. Same thread as the client.
#include "client/MapClient.h"
#include "pipeline/ProtocolPipeline.h"

namespace mapi {

void MapClient::listAgents(AgentListDone done, const QString &cursor, int page)
{
    Json params = Json::object();
    if (!cursor.isEmpty())
        params["cursor"] = cursor.toStdString();
    const qint64 sentAt = nowMs();
    request(QStringLiteral("map/agents/list"), params,
            [this, done = std::move(done), page, sentAt](bool ok, const Json &result, const RpcError &error) mutable {
                const Json *next = ok ? jsonChild(result, "nextCursor") : nullptr;
                if (next && next->is_string() && !next->get_ref<const std::string &>().empty()
                    && page + 1 < ProtocolPipeline::kAgentListMaxPages) {
                    listAgents(std::move(done), QString::fromStdString(next->get<std::string>()), page + 1);
                    return;
                }
                done(ok, error, sentAt);
            });
}

} // namespace mapi
