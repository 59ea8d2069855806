#include "style/Theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace mapi::ui {

void applyTheme(Theme theme)
{
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QPalette p;
    if (theme == Theme::Dark) {
        const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xdf, 0xe1, 0xe5);
        const QColor highlight(0x35, 0x74, 0xf0);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
        p.setColor(QPalette::ToolTipBase, window);
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::PlaceholderText, QColor(0x8b, 0x8e, 0x94));
        p.setColor(QPalette::Button, window);
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, Qt::white);
        p.setColor(QPalette::Highlight, highlight);
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::Link, QColor(0x6c, 0x9e, 0xf8));
        p.setColor(QPalette::Mid, QColor(0x45, 0x47, 0x4c));
        p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
        p.setColor(QPalette::Light, QColor(0x3c, 0x3f, 0x44));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x6f, 0x72, 0x78));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x6f, 0x72, 0x78));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x6f, 0x72, 0x78));
    } else {
        p = QApplication::style()->standardPalette();
    }
    QApplication::setPalette(p);
}

Theme themeFromName(const QString &name)
{
    return name == QLatin1String("dark") ? Theme::Dark : Theme::Light;
}

QString themeName(Theme theme)
{
    return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light");
}

bool isDarkTheme()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace mapi::ui
