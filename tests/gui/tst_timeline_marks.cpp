// The timeline's marks drawn as images (timeline/MarkerSprites) and its density cells composed
// per lane: the same pixels as the shapes and the per-cell fills they replace, and vectors still
// in a vector picture.
#include "GuiTestSupport.h"

#include "panels/TimelinePanel.h"
#include "session/InspectorSession.h"
#include "session/SelectionHub.h"
#include "timeline/MarkerSprites.h"
#include "timeline/TimelineView.h"

#include <QBuffer>
#include <QPainter>
#include <QSvgGenerator>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mapi;
using namespace mapi::ui;

namespace {

using Shape = MarkerSprites::Shape;

const QString kCapture = QStringLiteral(MAPI_TEST_DATA "/scenario-deliver.ndjson");

QImage canvas(qreal ratio)
{
    QImage image(QSize(60, 40) * ratio, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(ratio);
    image.fill(QColor(0xf4, 0xf0, 0xe8));
    return image;
}

// The largest difference of one channel between two pictures of the same size.
int largestDifference(const QImage &a, const QImage &b)
{
    int largest = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            largest = std::max({largest, std::abs(qRed(p) - qRed(q)), std::abs(qGreen(p) - qGreen(q)),
                                std::abs(qBlue(p) - qBlue(q)), std::abs(qAlpha(p) - qAlpha(q))});
        }
    return largest;
}

int pixelsDifferentFrom(const QImage &image, QRgb background)
{
    int count = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            count += image.pixel(x, y) != background;
    return count;
}

} // namespace

class TimelineMarksTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { test::failOnQtWarnings(); }

    void imagesAreTheShapes_data();
    void imagesAreTheShapes();
    void aVectorPictureKeepsShapes();
    void denseCellsTintTheLanesWithEndpoints();
};

void TimelineMarksTest::imagesAreTheShapes_data()
{
    QTest::addColumn<int>("shape");
    QTest::addColumn<qreal>("ratio");
    for (const qreal ratio : {1.0, 2.0})
        for (const Shape shape : {Shape::Diamond, Shape::HeadDown, Shape::HeadUp, Shape::Dot, Shape::Ring})
            QTest::addRow("shape %d at %g", int(shape), ratio) << int(shape) << ratio;
}

void TimelineMarksTest::imagesAreTheShapes()
{
    QFETCH(int, shape);
    QFETCH(qreal, ratio);
    const QRgb fill = qRgb(0x2a, 0x6f, 0xd6), outline = qRgb(0xff, 0xff, 0xff);
    const QImage empty = canvas(ratio);
    QImage asShape = empty, asImage = empty;
    {
        QPainter painter(&asShape);
        painter.setRenderHint(QPainter::Antialiasing, true);
        MarkerSprites::drawShape(painter, Shape(shape), QPointF(20.5, 17), QColor::fromRgba(fill), QColor::fromRgba(outline));
        MarkerSprites::drawShape(painter, Shape(shape), QPointF(41.5, 22), QColor::fromRgba(fill), QColor::fromRgba(outline));
    }
    MarkerSprites sprites;
    {
        QPainter painter(&asImage);
        sprites.draw(painter, Shape(shape), 20, 17, fill, outline);
        sprites.draw(painter, Shape(shape), 41, 22, fill, outline); // the second from the same image
    }
    // Something was drawn, at the place of the shape, with the shape's pixels (rounding apart).
    QVERIFY(pixelsDifferentFrom(asImage, empty.pixel(0, 0)) > 10);
    QVERIFY2(largestDifference(asShape, asImage) <= 2,
             qPrintable(QStringLiteral("differs by %1").arg(largestDifference(asShape, asImage))));
}

void TimelineMarksTest::aVectorPictureKeepsShapes()
{
    QBuffer svg;
    svg.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&svg);
    generator.setSize(QSize(60, 40));
    MarkerSprites sprites;
    {
        QPainter painter(&generator);
        sprites.draw(painter, Shape::Diamond, 20, 17, qRgb(0x2a, 0x6f, 0xd6), qRgb(0xff, 0xff, 0xff));
        sprites.draw(painter, Shape::Ring, 40, 17, qRgb(0xd6, 0x2a, 0x2a));
    }
    const QByteArray text = svg.data();
    QVERIFY(!text.contains("<image"));
    QVERIFY(text.contains("<polygon") || text.contains("<path"));
    QVERIFY(text.contains("#2a6fd6"));
}

// Over the capture with a day across the plot every message falls in one or two pixel columns:
// dense. Each agent lane with endpoints there shows a cell tinted towards the highlight colour;
// a few columns on, where no lane has any, each lane shows what it shows without cells.
void TimelineMarksTest::denseCellsTintTheLanesWithEndpoints()
{
    InspectorSession session;
    SelectionHub hub;
    TimelinePanel panel(&session, &hub);
    panel.resize(1400, 900);
    panel.show();
    QString error;
    QVERIFY2(session.openTraceAndWait(kCapture, &error), qPrintable(error));
    TimelineView *view = panel.view();
    const TimelineIndex &index = view->index();
    view->showTimeRange(double(index.firstTimeMs()) - 3600e3, double(index.firstTimeMs()) + 23 * 3600e3);
    const QRect plot = view->plotRect();
    const TimelineAxis &axis = view->axis();
    const int x = int(std::floor(axis.mapTimeToX(double(index.messages().front().timeMs))));
    QCOMPARE(view->hitTest(QPoint(x, view->rowCenterY(0))).kind, TimelineView::Hit::Kind::Dense);
    const QImage picture = view->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QColor highlight = view->palette().color(QPalette::Highlight);
    auto endpointsIn = [&](const SortedTimes &times, int column) {
        const size_t from = times.lowerBound(axis.mapXToTime(column));
        return int(times.lowerBound(axis.mapXToTime(column + 1), from) - from);
    };
    auto towardsHighlight = [&](QRgb pixel) {
        return std::abs(qRed(pixel) - highlight.red()) + std::abs(qGreen(pixel) - highlight.green())
               + std::abs(qBlue(pixel) - highlight.blue());
    };
    auto marksNear = [&](int agentRow, int column) {
        int near = 0;
        for (const TimelineIndex::StateMark &mark : index.stateMarks(agentRow))
            near += std::abs(axis.mapTimeToX(double(mark.timeMs)) - column) < 5;
        return near;
    };
    int tinted = 0, plain = 0;
    const auto &rows = view->lanes().rows();
    for (int r = 0; r < int(rows.size()); ++r) {
        const LaneRow &row = rows[size_t(r)];
        const int y = view->rowTopY(r) + 4; // inside the cells (from 3 px below a lane's top)
        if (row.kind != LaneRow::Kind::Agent || row.collapsed || y + 4 > plot.bottom())
            continue;
        const SortedTimes &times = index.endpointTimes(row.agentRow);
        // Above the cells: what the lane shows there without them (its background or a grid line).
        const QRgb under = picture.pixel(x, view->rowTopY(r) + 1);
        const QRgb cell = picture.pixel(x, y);
        if (endpointsIn(times, x) > 0) {
            QVERIFY2(towardsHighlight(cell) < towardsHighlight(under), qPrintable(row.id));
            // A lone column is drawn 3 pixels wide.
            QVERIFY(towardsHighlight(picture.pixel(x - 1, y)) < towardsHighlight(picture.pixel(x - 1, view->rowTopY(r) + 1)));
            ++tinted;
        }
        // A few columns on, past the cell and any mark: the lane as it is without them.
        const int clear = x + 6;
        if (endpointsIn(times, clear - 2) + endpointsIn(times, clear - 1) + endpointsIn(times, clear)
                    + endpointsIn(times, clear + 1) + endpointsIn(times, clear + 2) == 0
            && marksNear(row.agentRow, clear) == 0) {
            QCOMPARE(picture.pixel(clear, y), picture.pixel(clear, view->rowTopY(r) + 1));
            ++plain;
        }
    }
    QVERIFY(tinted >= 2);
    QVERIFY(plain >= 1);
}

QTEST_MAIN(TimelineMarksTest)
#include "tst_timeline_marks.moc"
