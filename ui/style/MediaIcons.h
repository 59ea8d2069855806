// The replay bar's media glyphs (play, pause, step, skip), drawn in the palette's button text
// colour: the style's standard media icons are black pixmaps, nearly invisible on the dark
// theme. Made again when the palette changes (ReplayBar::changeEvent).
#pragma once

#include <QIcon>
#include <QPalette>

namespace mapi::ui {

enum class MediaGlyph { Play, Pause, StepBack, StepForward, ToStart, ToEnd };

// Normal and disabled pixmaps, 16 and 32 px, in `palette`'s ButtonText colours.
QIcon mediaIcon(MediaGlyph glyph, const QPalette &palette);

} // namespace mapi::ui
