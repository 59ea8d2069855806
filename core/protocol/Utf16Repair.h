// Lone UTF-16 surrogates in JSON text. JavaScript writes a string cut in the middle of an emoji
// (common when an agent truncates model output) as a lone "\ud83d", which is not valid JSON text
// for strict parsers (nlohmann, simdjson): the whole frame or line would be lost, and a false gap
// reported. Callers that fail to parse a text try once more with its lone surrogates replaced by
// "\ufffd" (U+FFFD, the replacement character), and count them.
#pragma once

#include <QByteArray>

namespace mapi {

// Replaces every `\uD800`–`\uDFFF` escape that is not part of a high-then-low pair with `\ufffd`,
// in place (the same length: the text's offsets stay valid). Returns how many were replaced.
// Escaped backslashes (`\\u…` is a backslash and a 'u') are not escapes. Linear, no allocation
// unless something is replaced.
int repairLoneSurrogates(QByteArray &jsonText);

} // namespace mapi
