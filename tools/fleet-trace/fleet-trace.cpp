// map-fleet-trace OUT [--agents N] [--minutes M] [--seed S] [--no-incidents]
// Writes a realistic large MAP system as a trace (FleetTrace.h says what is in it) and prints
// what it wrote: agents, teams, events, and the incidents with their times.
#include "FleetTrace.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QStringList>

#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments().mid(1);
    if (args.isEmpty() || args.front().startsWith(QLatin1Char('-'))) {
        std::fprintf(stderr, "usage: map-fleet-trace OUT.jsonl[.zst|.gz] [--agents N] [--minutes M] [--seed S] [--no-incidents]\n");
        return 2;
    }
    mapi::fleet::FleetOptions options;
    for (int i = 1; i < args.size(); ++i) {
        const QString &flag = args[i];
        bool ok = true;
        if (flag == QLatin1String("--no-incidents")) {
            options.incidents = false;
            continue;
        }
        const QString value = args.value(++i);
        if (flag == QLatin1String("--agents"))
            options.agents = value.toInt(&ok);
        else if (flag == QLatin1String("--minutes"))
            options.durationMs = qint64(value.toDouble(&ok) * 60000);
        else if (flag == QLatin1String("--seed"))
            options.seed = value.toUInt(&ok);
        else
            ok = false;
        if (!ok || options.agents < 10 || options.agents > 1000000 || options.durationMs < 60000) {
            std::fprintf(stderr, "map-fleet-trace: bad %s %s (agents 10 to 1,000,000; at least 1 minute)\n", qPrintable(flag), qPrintable(value));
            return 2;
        }
    }
    const auto written = mapi::fleet::writeFleetTrace(args.front(), options);
    if (!written) {
        std::fprintf(stderr, "map-fleet-trace: %s\n", qPrintable(written.error()));
        return 1;
    }
    const auto time = [](qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms).toUTC().toString(QStringLiteral("HH:mm:ss")); };
    std::printf("%s: %d agents in %d teams, %d scopes; %lld events, %lld messages (%lld between teams)\n", qPrintable(args.front()),
                written->agents, written->teams, written->scopes, static_cast<long long>(written->events),
                static_cast<long long>(written->messages), static_cast<long long>(written->crossTeamMessages));
    if (!written->failingTeam.isEmpty())
        std::printf("incidents: %s's dependency fails at %s UTC (%d agents); %s falls silent at %s UTC (%d agents)\n",
                    qPrintable(written->failingTeam), qPrintable(time(written->failureAtMs)), written->failedAgents,
                    qPrintable(written->silentTeam), qPrintable(time(written->silenceAtMs)), written->silentAgents);
    return 0;
}
