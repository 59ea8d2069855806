// Hashes of short texts for the lookups made once or more per event while decoding and applying
// (repeating strings, event and message ids). Qt 6.4's qHash of a string took 15 % of the
// decoding thread here (perf: its 256-bit AES path, entered for every 20–40-byte id); XXH3
// (xxHash, inlined: no library to link) hashes such a text in a few nanoseconds.
//
// Seeded per process, as QHash is: a hostile server cannot craft ids that collide.
#pragma once

#include <QHashFunctions>
#include <QString>
#include <QStringView>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace mapi {

inline quint64 fastHash(const void *data, size_t bytes)
{
    static const quint64 seed = quint64(QHashSeed::globalSeed());
    return XXH3_64bits_withSeed(data, bytes, seed);
}

inline quint64 fastHash(QStringView text)
{
    return fastHash(text.data(), size_t(text.size()) * sizeof(QChar));
}

// A QString hashed by fastHash, as a key of the store's per-event lookups: QHash<FastString, T>.
// It converts from and to QString (a reference count, no copy of the text).
class FastString : public QString
{
public:
    FastString() = default;
    FastString(const QString &text) : QString(text) {}
    FastString(QString &&text) : QString(std::move(text)) {}
};

inline size_t qHash(const FastString &text, size_t seed = 0)
{
    return size_t(fastHash(text)) ^ seed;
}

} // namespace mapi
