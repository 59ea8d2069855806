// fuzz_operator_inputs: the parsers of what an operator or another tool hands the console beside
// MAP traffic (issue 42 item 9). The first byte picks one, the rest is its input:
//   0  a map-inspector:// link (parseDeepLink): a link it accepts makes the same link again
//      (makeDeepLink), which parses back to an equal link;
//   1  an alert rules document (alertRulesFromJson, as --rules and the settings read it): rules it
//      accepts, written out (alertRulesToJson), read back the same;
//   2  an incident bundle's header (incidentFromHeader): whatever it holds, no crash, counts >= 0;
//   3  text through the secret rules (redactSecrets, on every way out): redacting twice gives what
//      redacting once gave, when both passes read it with the same rules (JSON, or text): a pass
//      that keeps finding new secrets in its own output would show different texts on different
//      ways out.
#include "FuzzSupport.h"

#include "alerts/AlertRules.h"
#include "common/DeepLink.h"
#include "common/Redaction.h"
#include "trace/IncidentBundle.h"

#include <cstddef>
#include <cstdint>

using namespace mapi;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::initProcess(fuzz::EventDispatcher::NotNeeded);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArray input(reinterpret_cast<const char *>(data + 1), qsizetype(size - 1));
    const bool check = fuzz::checkInvariants();
    switch (data[0] % 4) {
    case 0: {
        const ErrorOr<DeepLink> link = parseDeepLink(QString::fromUtf8(input));
        if (!link || !check)
            break;
        const QString again = makeDeepLink(*link);
        const ErrorOr<DeepLink> back = parseDeepLink(again);
        if (!back || *back != *link)
            fuzz::invariantBroken("a link it accepted does not survive makeDeepLink", again.toUtf8());
        break;
    }
    case 1: {
        const Json document = Json::parse(input.constBegin(), input.constEnd(), nullptr, false);
        if (document.is_discarded())
            break;
        const ErrorOr<AlertRules> rules = alertRulesFromJson(document);
        if (!rules || !check)
            break;
        const Json written = alertRulesToJson(*rules);
        const ErrorOr<AlertRules> back = alertRulesFromJson(written);
        if (!back || alertRulesToJson(*back) != written)
            fuzz::invariantBroken("rules written out do not read back the same", QByteArray::fromStdString(written.dump()));
        break;
    }
    case 2: {
        const Json header = Json::parse(input.constBegin(), input.constEnd(), nullptr, false);
        if (header.is_discarded())
            break;
        const std::optional<IncidentInfo> info = incidentFromHeader(header);
        if (check && info && (info->damagedMembers < 0 || info->replacements < 0 || info->binaryFramesLeftOut < 0))
            fuzz::invariantBroken("a bundle header read as negative counts", input);
        break;
    }
    case 3: {
        const QByteArray once = redactSecrets(input);
        // Each rule set on its own: a text that was not JSON (JSON rules) and is after its first
        // pass (a cut secret held what broke it) meets the other set the second time.
        const bool sameRules = Json::accept(input.constBegin(), input.constEnd()) == Json::accept(once.constBegin(), once.constEnd());
        if (check && sameRules && redactSecrets(once) != once)
            fuzz::invariantBroken("redacting twice differs from redacting once", input.left(2000) + "\n--\n" + once.left(2000));
        break;
    }
    }
    return 0;
}
