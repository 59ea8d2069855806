// The one order of names in every panel: case-insensitive, runs of digits compared as numbers
// ("worker-9" < "worker-10"), leading zeros ignored. The agents table, the scopes tree, the
// timeline's lanes and the topology's siblings all sort by it, so they list agents alike.
// (QCollator's numeric mode does the same only outside the C locale, so the order would depend
// on the environment.)
#pragma once

#include <QString>
#include <QStringView>

namespace mapi::ui {

// < 0, 0, > 0 as `a` sorts before, with or after `b`.
int naturalCompare(QStringView a, QStringView b);
inline bool naturalLess(QStringView a, QStringView b)
{
    return naturalCompare(a, b) < 0;
}
// A key whose plain string order is naturalCompare's (for digit runs of up to 20 digits), for
// sorting by one precomputed key instead of a comparison per step.
QString naturalSortKey(QStringView text);

} // namespace mapi::ui
