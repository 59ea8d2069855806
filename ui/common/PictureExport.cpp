#include "common/PictureExport.h"

#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace mapi::ui {

namespace {

bool failWith(QString *error, const QString &why)
{
    if (error)
        *error = why;
    return false;
}

} // namespace

bool exportPicture(const QString &path, const QSize &size, qreal devicePixelRatio, const QString &title,
                   const std::function<void(QPainter &)> &paint, QString *error)
{
    if (size.isEmpty())
        return failWith(error, QObject::tr("The view has no size to export"));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return failWith(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(title);
        svg.setDescription(QObject::tr("Exported by MAP Inspector"));
        QPainter painter(&svg);
        paint(painter);
        painter.end();
    } else {
        QImage image(size * devicePixelRatio, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(devicePixelRatio);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        paint(painter);
        painter.end();
        if (!image.save(&file, "PNG"))
            return failWith(error, QObject::tr("Cannot encode %1 as PNG").arg(path));
    }
    if (!file.commit())
        return failWith(error, QObject::tr("Cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

} // namespace mapi::ui
