#include "map/Federation.h"

namespace mapi {

namespace {

// Where "<system>:agent:" or "<system>:scope:" ends in `id` (its system before it, without a
// colon); -1 when `id` has no such prefix.
int federatedPrefixEnd(const QString &id, int *systemEnd = nullptr)
{
    const int colon = int(id.indexOf(u':'));
    if (colon <= 0)
        return -1;
    for (const QLatin1String kind : {QLatin1String(":agent:"), QLatin1String(":scope:")}) {
        if (QStringView(id).mid(colon).startsWith(kind) && id.size() > colon + kind.size()) {
            if (systemEnd)
                *systemEnd = colon;
            return colon + int(kind.size());
        }
    }
    return -1;
}

} // namespace

QString federatedFrom(const Json &metadata)
{
    return metadata.is_object() ? jsonString(metadata, "_federatedFrom") : QString();
}

QString federatedSystemOfAddress(const QString &id)
{
    int systemEnd = 0;
    return federatedPrefixEnd(id, &systemEnd) < 0 ? QString() : id.left(systemEnd);
}

QString federatedOrigin(const QString &id, const Json &metadata, bool placeholder)
{
    if (const QString from = federatedFrom(metadata); !from.isEmpty())
        return from;
    return placeholder ? federatedSystemOfAddress(id) : QString();
}

Crossing messageCrossing(const QString &from, const QStringList &to)
{
    if (const QString system = federatedSystemOfAddress(from); !system.isEmpty())
        return {system, true};
    for (const QString &id : to)
        if (const QString system = federatedSystemOfAddress(id); !system.isEmpty())
            return {system, false};
    return {};
}

QString federatedOriginalId(const QString &id, const Json &metadata)
{
    if (metadata.is_object())
        if (const QString original = jsonString(metadata, "_originalId"); !original.isEmpty())
            return original;
    const int end = federatedPrefixEnd(id);
    return end < 0 ? id : id.mid(end);
}

} // namespace mapi
