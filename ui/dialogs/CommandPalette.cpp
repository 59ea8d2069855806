#include "dialogs/CommandPalette.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace mapi::ui {

namespace {

QString plainText(QString text)
{
    text.remove(QLatin1Char('&'));
    if (text.endsWith(QChar(0x2026))) // "…"
        text.chop(1);
    return text;
}

void collect(const QMenu *menu, const QString &path, std::vector<CommandPalette::Command> &out)
{
    for (QAction *action : menu->actions()) {
        if (action->isSeparator() || !action->isVisible())
            continue;
        if (const QMenu *sub = action->menu()) {
            collect(sub, path + QStringLiteral(" › ") + plainText(sub->title()), out);
            continue;
        }
        out.push_back({plainText(action->text()), path, action->shortcut(), action});
    }
}

// Up and Down in the search box move in the list, so that typing and choosing need no mouse.
class ArrowsToList : public QObject
{
public:
    ArrowsToList(QTreeWidget *list, QObject *parent)
        : QObject(parent)
        , m_list(list)
    {
    }
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() != QEvent::KeyPress)
            return false;
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key != Qt::Key_Up && key != Qt::Key_Down)
            return false;
        QTreeWidgetItem *current = m_list->currentItem();
        QTreeWidgetItem *next = !current ? m_list->topLevelItem(0)
                                : key == Qt::Key_Down ? m_list->itemBelow(current)
                                                      : m_list->itemAbove(current);
        if (next)
            m_list->setCurrentItem(next);
        return true;
    }

private:
    QTreeWidget *m_list;
};

} // namespace

std::vector<CommandPalette::Command> CommandPalette::commandsOf(const QMenuBar *menus)
{
    std::vector<Command> out;
    for (QAction *top : menus->actions())
        if (const QMenu *menu = top->menu())
            collect(menu, plainText(menu->title()), out);
    return out;
}

CommandPalette::CommandPalette(std::vector<Command> commands, const QString &title, QWidget *parent)
    : QDialog(parent)
    , m_commands(std::move(commands))
    , m_search(new QLineEdit(this))
    , m_list(new QTreeWidget(this))
{
    setObjectName(QStringLiteral("commandPalette"));
    setWindowTitle(title);
    setAttribute(Qt::WA_DeleteOnClose);
    m_search->setObjectName(QStringLiteral("commandSearch"));
    m_search->setPlaceholderText(tr("Type to find a panel or a command, Enter to run it"));
    m_search->setClearButtonEnabled(true);
    m_list->setObjectName(QStringLiteral("commandList"));
    m_list->setColumnCount(3);
    m_list->setHeaderLabels({tr("Command"), tr("Menu"), tr("Shortcut")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_list->header()->setStretchLastSection(false);
    for (const Command &command : m_commands) {
        auto *item = new QTreeWidgetItem(m_list, {command.text, command.menu, command.shortcut.toString(QKeySequence::NativeText)});
        item->setDisabled(command.action && !command.action->isEnabled());
        if (item->isDisabled())
            item->setToolTip(0, tr("Not available now"));
    }
    m_list->resizeColumnToContents(1);
    m_list->resizeColumnToContents(2);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_search);
    layout->addWidget(m_list, 1);
    layout->addWidget(buttons);
    resize(620, 520);

    m_search->installEventFilter(new ArrowsToList(m_list, this));
    connect(m_search, &QLineEdit::textChanged, this, &CommandPalette::applyFilter);
    connect(m_search, &QLineEdit::returnPressed, this, &CommandPalette::runSelected);
    connect(m_list, &QTreeWidget::itemActivated, this, &CommandPalette::runSelected);
    applyFilter();
    m_search->setFocus();
}

void CommandPalette::applyFilter()
{
    const QStringList words = m_search->text().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    QTreeWidgetItem *first = nullptr;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        QTreeWidgetItem *item = m_list->topLevelItem(i);
        const QString haystack = item->text(0) + u' ' + item->text(1);
        const bool shown = std::all_of(words.cbegin(), words.cend(),
                                       [&](const QString &w) { return haystack.contains(w, Qt::CaseInsensitive); });
        item->setHidden(!shown);
        if (shown && !first && !item->isDisabled())
            first = item;
    }
    m_list->setCurrentItem(first);
}

void CommandPalette::runSelected()
{
    QTreeWidgetItem *item = m_list->currentItem();
    if (!item || item->isHidden() || item->isDisabled())
        return;
    const QPointer<QAction> action = m_commands[size_t(m_list->indexOfTopLevelItem(item))].action;
    accept(); // closed first: the command may open a dialog of its own
    if (action)
        action->trigger();
}

QStringList CommandPalette::shownTexts() const
{
    QStringList out;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        if (!m_list->topLevelItem(i)->isHidden())
            out << m_list->topLevelItem(i)->text(0);
    return out;
}

} // namespace mapi::ui
