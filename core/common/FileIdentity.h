// Whether an output would overwrite an input: the check every command and export that writes a
// file in one go makes before it opens its output (a convert or bundle onto its own input used to
// truncate the input while reading it: issue 42).
#pragma once

#include <QString>
#include <QStringList>

namespace mapi {

// Whether `a` and `b` name the same existing file by identity: symbolic and hard links, `..`
// and a case-insensitive file system's spellings included. False when either does not exist.
bool isSameFile(const QString &a, const QString &b);

// "OUT is the input IN: ..." when `output` is one of `inputs` (empty ones ignored), else empty.
QString outputOverwritesInput(const QString &output, const QStringList &inputs);

} // namespace mapi
