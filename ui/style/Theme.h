// Light and dark themes: Fusion style with a palette, so every widget and view follows.
#pragma once

#include <QString>

class QApplication;

namespace mapi::ui {

enum class Theme { Light, Dark };

void applyTheme(Theme theme);
Theme themeFromName(const QString &name);   // "dark" → Dark, anything else → Light
QString themeName(Theme theme);
bool isDarkTheme();                         // from the current application palette

} // namespace mapi::ui
