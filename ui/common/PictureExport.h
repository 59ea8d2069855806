// File → Export: pictures of the views. (Chrome traces and CSV tables: core/trace/ModelExport.h,
// written by an ExportJob from MainWindow::exportTo.) Thread: GUI thread.
//   - pictures of a view: PNG (raster, at the screen's pixel ratio) or SVG (vectors, through
//     QSvgGenerator), from a paint routine that draws the view in a rectangle of `size`.
#pragma once

#include <QSize>
#include <QString>

#include <functional>

class QPainter;

namespace mapi::ui {

// SVG when `path` ends in .svg (case-insensitive), PNG otherwise.
bool exportPicture(const QString &path, const QSize &size, qreal devicePixelRatio, const QString &title,
                   const std::function<void(QPainter &)> &paint, QString *error);

} // namespace mapi::ui
