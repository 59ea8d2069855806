// Probes of a grabbed picture, for the GUI tests that save screenshots: what was drawn where, so
// that a view that drew nothing (or something else) fails the test, not only the model under it.
//   - inkPixels / inkBounds: the pixels of a rectangle that stand out from its background;
//   - inkSpansText: a rectangle holds drawn text about as wide as the text it should show (an
//     empty, cut or different text is narrower or wider);
//   - mostlyColor: a rectangle is filled with a colour (a selected row, a bar).
// Rectangles are in the grabbed widget's coordinates (rectIn maps a child's into them); the
// offscreen platform grabs at a device pixel ratio of 1.
#pragma once

#include <QAbstractItemView>
#include <QColor>
#include <QFont>
#include <QFontMetrics>
#include <QHash>
#include <QImage>
#include <QLabel>
#include <QString>
#include <QWidget>

#include <algorithm>
#include <cstdlib>

namespace mapi::test {

inline QImage picture(QWidget *widget)
{
    return widget->grab().toImage().convertToFormat(QImage::Format_RGB32);
}

// `child`'s rectangle `r` (its own coordinates; null: all of it) in `top`'s picture.
inline QRect rectIn(const QWidget *top, const QWidget *child, QRect r = QRect())
{
    if (r.isNull())
        r = child->rect();
    return QRect(child->mapTo(top, r.topLeft()), r.size());
}

inline bool colorNear(const QColor &a, const QColor &b, int tolerance = 12)
{
    return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance
           && std::abs(a.blue() - b.blue()) <= tolerance;
}

// The colour most pixels of `rect` have: the background there.
inline QColor commonColor(const QImage &image, const QRect &rect)
{
    QHash<QRgb, int> counts;
    const QRect r = rect.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            ++counts[image.pixel(x, y)];
    QRgb best = 0;
    int most = -1;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        if (it.value() > most) {
            most = it.value();
            best = it.key();
        }
    return QColor(best);
}

// The share (0..1) of `rect`'s pixels near `color`.
inline double shareOf(const QImage &image, const QRect &rect, const QColor &color, int tolerance = 12)
{
    const QRect r = rect.intersected(image.rect());
    if (r.isEmpty())
        return 0;
    int near = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            near += colorNear(image.pixelColor(x, y), color, tolerance) ? 1 : 0;
    return double(near) / double(r.width() * r.height());
}

inline bool mostlyColor(const QImage &image, const QRect &rect, const QColor &color, double share = 0.5)
{
    return shareOf(image, rect, color) >= share;
}

// Pixels of `rect` that differ from `background` by more than `tolerance` in some channel.
inline int inkPixels(const QImage &image, const QRect &rect, const QColor &background, int tolerance = 60)
{
    const QRect r = rect.intersected(image.rect());
    int ink = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            ink += colorNear(image.pixelColor(x, y), background, tolerance) ? 0 : 1;
    return ink;
}

inline int inkPixels(const QImage &image, const QRect &rect)
{
    return inkPixels(image, rect, commonColor(image, rect));
}

inline QRect inkBounds(const QImage &image, const QRect &rect, const QColor &background, int tolerance = 60)
{
    const QRect r = rect.intersected(image.rect());
    QRect out;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            if (!colorNear(image.pixelColor(x, y), background, tolerance))
                out |= QRect(x, y, 1, 1);
    return out;
}

// Whether `rect` holds drawn text (against its most common colour) about as wide as `text` in
// `font`: at least 80% of its advance, at most its advance plus `extra` pixels (an icon or a
// mark drawn beside it). `why` says what was measured.
inline bool inkSpansText(const QImage &image, const QRect &rect, const QString &text, const QFont &font, QString *why,
                         int extra = 6)
{
    const QColor background = commonColor(image, rect);
    const QRect ink = inkBounds(image, rect, background);
    const int want = QFontMetrics(font).horizontalAdvance(text);
    const bool ok = !ink.isEmpty() && ink.width() >= want * 8 / 10 && ink.width() <= want + extra;
    if (why)
        *why = QStringLiteral("\"%1\": ink %2 px wide (%3 pixels) in %4,%5 %6×%7 on %8, the text takes %9 px")
                   .arg(text).arg(ink.width()).arg(inkPixels(image, rect, background)).arg(rect.x()).arg(rect.y())
                   .arg(rect.width()).arg(rect.height()).arg(background.name()).arg(want);
    return ok;
}

// A label's plain text, drawn in the label's place of `top`'s picture.
inline bool labelDrawn(const QImage &image, const QWidget *top, const QLabel *label, QString *why, int extra = 6)
{
    return inkSpansText(image, rectIn(top, label), label->text(), label->font(), why, extra);
}

// A cell's display text (cut as the view cuts it), drawn in the cell's place (inside its grid lines) of `top`'s picture.
inline QRect cellRect(const QWidget *top, const QAbstractItemView *view, const QModelIndex &index)
{
    return rectIn(top, view->viewport(), view->visualRect(index).adjusted(1, 1, -2, -2));
}

inline bool cellDrawn(const QImage &image, const QWidget *top, const QAbstractItemView *view, const QModelIndex &index,
                      QString *why, int extra = 6)
{
    // The text as the view draws it: cut with "…" where the column is too narrow for it.
    const QVariant font = index.data(Qt::FontRole);
    const QFont f = font.isValid() ? font.value<QFont>() : view->font();
    const QString shown = QFontMetrics(f).elidedText(index.data().toString(), view->textElideMode(), view->visualRect(index).width() - 8);
    return inkSpansText(image, cellRect(top, view, index), shown, f, why, extra);
}

// Every cell of `row` whose text fits its column is drawn; returns how many were checked (0 when
// one was not: `why` says which).
inline int rowDrawn(const QImage &image, const QWidget *top, const QAbstractItemView *view, int row, QString *why)
{
    int checked = 0;
    for (int c = 0; c < view->model()->columnCount(); ++c) {
        const QModelIndex index = view->model()->index(row, c);
        const QRect cell = view->visualRect(index);
        const QString text = index.data().toString();
        const QVariant font = index.data(Qt::FontRole);
        const QFontMetrics metrics(font.isValid() ? font.value<QFont>() : view->font());
        if (cell.isEmpty() || text.isEmpty() || text.contains(u'\n') || metrics.horizontalAdvance(text) + 12 > cell.width()
            || !index.data(Qt::DecorationRole).isNull())
            continue;
        if (!cellDrawn(image, top, view, index, why))
            return 0;
        ++checked;
    }
    return checked;
}

// Whether `rect` is mostly the selection's colour (the view focused or not).
inline bool selectedColor(const QImage &image, const QRect &rect, const QWidget *view)
{
    const QPalette &palette = view->palette();
    return mostlyColor(image, rect, palette.color(QPalette::Active, QPalette::Highlight))
           || mostlyColor(image, rect, palette.color(QPalette::Inactive, QPalette::Highlight));
}

} // namespace mapi::test
