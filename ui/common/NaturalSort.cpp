#include "common/NaturalSort.h"

#include <algorithm>

namespace mapi::ui {

namespace {

bool isDigit(QChar c)
{
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

constexpr qsizetype kKeyDigits = 20; // digit runs are left-padded to this width in sort keys

} // namespace

int naturalCompare(QStringView a, QStringView b)
{
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (isDigit(a[i]) && isDigit(b[j])) {
            qsizetype endA = i, endB = j;
            while (endA < a.size() && isDigit(a[endA]))
                ++endA;
            while (endB < b.size() && isDigit(b[endB]))
                ++endB;
            while (i + 1 < endA && a[i] == QLatin1Char('0')) // leading zeros do not count
                ++i;
            while (j + 1 < endB && b[j] == QLatin1Char('0'))
                ++j;
            if (endA - i != endB - j)
                return endA - i < endB - j ? -1 : 1; // fewer digits, smaller number
            const int byDigits = a.mid(i, endA - i).compare(b.mid(j, endB - j));
            if (byDigits != 0)
                return byDigits < 0 ? -1 : 1;
            i = endA;
            j = endB;
            continue;
        }
        const QChar ca = a[i].toCaseFolded(), cb = b[j].toCaseFolded();
        if (ca != cb)
            return ca < cb ? -1 : 1;
        ++i;
        ++j;
    }
    if (i < a.size())
        return 1;
    return j < b.size() ? -1 : 0;
}

QString naturalSortKey(QStringView text)
{
    QString key;
    key.reserve(text.size() + 2 * kKeyDigits);
    for (qsizetype i = 0; i < text.size();) {
        if (isDigit(text[i])) {
            qsizetype end = i;
            while (end < text.size() && isDigit(text[end]))
                ++end;
            qsizetype start = i;
            while (start + 1 < end && text[start] == QLatin1Char('0'))
                ++start;
            key += QString(std::max<qsizetype>(0, kKeyDigits - (end - start)), QLatin1Char('0'));
            key += text.mid(start, end - start);
            i = end;
        } else {
            key += text[i].toCaseFolded();
            ++i;
        }
    }
    return key;
}

} // namespace mapi::ui
