// A model's column titles, answered the way QAbstractItemModel::headerData asks for them.
#pragma once

#include <QString>
#include <QVariant>

#include <initializer_list>

namespace mapi::ui {

// The title of `section` for the horizontal header's display role; nothing for anything else.
// `titles` are in the order of the model's columns.
inline QVariant columnTitle(int section, Qt::Orientation orientation, int role, std::initializer_list<QString> titles)
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= int(titles.size()))
        return {};
    return *(titles.begin() + section);
}

} // namespace mapi::ui
