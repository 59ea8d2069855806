// Compile-time guard: Qt Gui/Widgets put these definitions on every target that links them.
// If core ever links either, this file stops the build.
#if defined(QT_GUI_LIB) || defined(QT_WIDGETS_LIB)
#error "mapi_core must not depend on Qt Gui or Qt Widgets"
#endif
