#include "common/FoldingBar.h"

#include <QString>
#include <QToolBar>

namespace mapi::ui {

QToolBar *foldingBar(QWidget *parent, const QString &objectName)
{
    auto *bar = new QToolBar(parent);
    bar->setObjectName(objectName);
    bar->setMovable(false);
    bar->setFloatable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->setContentsMargins(2, 0, 2, 0);
    return bar;
}

void addStretch(QToolBar *bar)
{
    auto *stretch = new QWidget(bar);
    stretch->setObjectName(QStringLiteral("stretch"));
    stretch->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    bar->addWidget(stretch);
}

} // namespace mapi::ui
