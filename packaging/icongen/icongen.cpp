// mapi-icongen: renders the application icon from its one SVG source into every form the
// installers need, at build time and with nothing but Qt (Linux, Windows and macOS builds make
// them the same way, without extra tools):
//
//   mapi-icongen SVG OUTDIR NAME
//     OUTDIR/hicolor/<N>x<N>/apps/NAME.png   N = 16 24 32 48 64 128 256 512 (freedesktop theme)
//     OUTDIR/hicolor/scalable/apps/NAME.svg  the source, copied
//     OUTDIR/map-inspector.ico               Windows: 16 24 32 48 64 128 256, PNG-compressed
//     OUTDIR/map-inspector.icns              macOS: 16 to 1024 (with @2x), PNG entries
//
// Output is deterministic: the same SVG and Qt give the same bytes on every run.
// Exit codes: 0 written, 1 usage, 2 SVG unreadable, 3 an output could not be written.
#include <QBuffer>
#include <QByteArray>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <QtEndian>

#include <cstdio>
#include <utility>
#include <vector>

namespace {

QByteArray renderPng(QSvgRenderer &svg, int size)
{
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::SmoothPixmapTransform);
        svg.render(&painter, QRectF(0, 0, size, size));
    }
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    image.convertToFormat(QImage::Format_ARGB32).save(&buffer, "PNG");
    return png;
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(data) != data.size()) {
        std::fprintf(stderr, "mapi-icongen: cannot write %s\n", qPrintable(path));
        return false;
    }
    return true;
}

template <typename T> void append(QByteArray &out, T value, bool bigEndian)
{
    char bytes[sizeof(T)];
    if (bigEndian)
        qToBigEndian(value, bytes);
    else
        qToLittleEndian(value, bytes);
    out.append(bytes, sizeof(T));
}

// ICO: ICONDIR, one ICONDIRENTRY per image, then the images. Since Windows Vista an entry may be
// a whole PNG file; width/height 0 means 256.
QByteArray makeIco(const std::vector<std::pair<int, QByteArray>> &images)
{
    QByteArray out;
    append<quint16>(out, 0, false); // reserved
    append<quint16>(out, 1, false); // type: icon
    append<quint16>(out, quint16(images.size()), false);
    quint32 offset = 6 + 16 * quint32(images.size());
    for (const auto &[size, png] : images) {
        out.append(char(size >= 256 ? 0 : size)); // width
        out.append(char(size >= 256 ? 0 : size)); // height
        out.append(char(0));                      // palette colours
        out.append(char(0));                      // reserved
        append<quint16>(out, 1, false);           // colour planes
        append<quint16>(out, 32, false);          // bits per pixel
        append<quint32>(out, quint32(png.size()), false);
        append<quint32>(out, offset, false);
        offset += quint32(png.size());
    }
    for (const auto &image : images)
        out.append(image.second);
    return out;
}

// ICNS: 'icns' + total length, then (type, length incl. 8-byte header, PNG data) per entry.
QByteArray makeIcns(const std::vector<std::pair<QByteArray, QByteArray>> &entries)
{
    QByteArray body;
    for (const auto &[type, png] : entries) {
        body.append(type);
        append<quint32>(body, quint32(png.size() + 8), true);
        body.append(png);
    }
    QByteArray out("icns");
    append<quint32>(out, quint32(body.size() + 8), true);
    return out + body;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    if (args.size() != 4) {
        std::fprintf(stderr, "usage: mapi-icongen SVG OUTDIR NAME\n");
        return 1;
    }
    const QString svgPath = args.at(1);
    const QDir out(args.at(2));
    const QString name = args.at(3);

    QFile svgFile(svgPath);
    if (!svgFile.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "mapi-icongen: cannot read %s\n", qPrintable(svgPath));
        return 2;
    }
    const QByteArray svgData = svgFile.readAll();
    QSvgRenderer svg(svgData);
    if (!svg.isValid()) {
        std::fprintf(stderr, "mapi-icongen: %s is not a valid SVG\n", qPrintable(svgPath));
        return 2;
    }

    // Every size any output needs, rendered once each.
    std::vector<std::pair<int, QByteArray>> png;
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512, 1024})
        png.emplace_back(size, renderPng(svg, size));
    const auto pngOf = [&png](int size) {
        for (const auto &p : png)
            if (p.first == size)
                return p.second;
        return QByteArray();
    };

    bool ok = true;
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512}) {
        const QString dir = QStringLiteral("hicolor/%1x%1/apps/").arg(size);
        ok &= writeFile(out.filePath(dir + name + QStringLiteral(".png")), pngOf(size));
    }
    ok &= writeFile(out.filePath(QStringLiteral("hicolor/scalable/apps/") + name + QStringLiteral(".svg")), svgData);

    std::vector<std::pair<int, QByteArray>> ico;
    for (int size : {16, 24, 32, 48, 64, 128, 256})
        ico.emplace_back(size, pngOf(size));
    ok &= writeFile(out.filePath(QStringLiteral("map-inspector.ico")), makeIco(ico));

    // icp4/icp5/icp6: 16/32/64; ic07/08/09: 128/256/512; ic10: 512@2x; ic11/12/13/14: 16/32/128/256@2x.
    ok &= writeFile(out.filePath(QStringLiteral("map-inspector.icns")),
                    makeIcns({{"icp4", pngOf(16)},  {"icp5", pngOf(32)},  {"icp6", pngOf(64)},
                              {"ic07", pngOf(128)}, {"ic08", pngOf(256)}, {"ic09", pngOf(512)},
                              {"ic10", pngOf(1024)}, {"ic11", pngOf(32)},  {"ic12", pngOf(64)},
                              {"ic13", pngOf(256)}, {"ic14", pngOf(512)}}));
    return ok ? 0 : 3;
}
