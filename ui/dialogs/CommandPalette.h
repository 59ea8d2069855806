// Help → Keyboard shortcuts (F1) and View → Go to a panel or an action (Ctrl+Shift+A): every
// command of the window's menus, each with its menu and shortcut, in one searchable list. Typing
// filters (every word must appear, in the command or its menu); Enter or a double-click runs the
// selected command (a panel comes forward and takes the focus) and closes the list. Not modal
// for the event loop (open()), deleted when closed. GUI thread.
#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QPointer>

#include <vector>

class QAction;
class QLineEdit;
class QMenuBar;
class QTreeWidget;

namespace mapi::ui {

class CommandPalette : public QDialog
{
    Q_OBJECT
public:
    struct Command
    {
        QString text;             // without '&' and the trailing "…"
        QString menu;             // "View › Go to panel"
        QKeySequence shortcut;
        QPointer<QAction> action;
    };
    // Every enabled or disabled, visible, non-separator action of `menus`, submenus included.
    static std::vector<Command> commandsOf(const QMenuBar *menus);

    CommandPalette(std::vector<Command> commands, const QString &title, QWidget *parent = nullptr);

    QLineEdit *searchBox() const { return m_search; }
    // The commands shown, in order (tests).
    QStringList shownTexts() const;

private:
    void applyFilter();
    void runSelected();

    std::vector<Command> m_commands;
    QLineEdit *m_search;
    QTreeWidget *m_list;
};

} // namespace mapi::ui
