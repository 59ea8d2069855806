#include "common/FileIdentity.h"

#include <QFile>

#include <filesystem>
#include <system_error>

namespace mapi {

static std::filesystem::path nativePath(const QString &path)
{
#ifdef Q_OS_WIN
    return std::filesystem::path(path.toStdWString());
#else
    return std::filesystem::path(QFile::encodeName(path).toStdString());
#endif
}

bool isSameFile(const QString &a, const QString &b)
{
    if (a.isEmpty() || b.isEmpty())
        return false;
    std::error_code error; // a path that does not exist is no file at all: not the same
    return std::filesystem::equivalent(nativePath(a), nativePath(b), error) && !error;
}

QString outputOverwritesInput(const QString &output, const QStringList &inputs)
{
    for (const QString &input : inputs) {
        if (isSameFile(output, input))
            return QStringLiteral("%1 is the input %2: writing it would destroy what is being read; choose another file")
                .arg(output, input);
    }
    return {};
}

} // namespace mapi
