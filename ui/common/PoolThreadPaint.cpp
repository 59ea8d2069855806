#include "common/PoolThreadPaint.h"

#include <QSemaphore>
#include <QThreadPool>

namespace mapi::ui {

void paintOnPoolThread(const std::function<void()> &paint)
{
    QSemaphore done;
    const bool started = QThreadPool::globalInstance()->tryStart([&paint, &done] {
        paint();
        done.release();
    });
    if (!started) {
        paint();
        return;
    }
    done.acquire();
}

} // namespace mapi::ui
