// SPDX-License-Identifier: MIT
// The typed methods: the types of a stub per service of proto/
// (client.git.revParse(request, options), client.git.startRevParse(...)),
// the options every call takes, and the method specs of gen/ts's services
// by method name. The Client (client.ts) builds the stubs; this file holds
// types and the table only, and sends nothing.
import { services } from "../gen/tk/services.js";
const byMethod = new Map();
for (const table of Object.values(services)) {
    for (const spec of Object.values(table)) {
        byMethod.set(spec.method, spec);
    }
}
/** The spec of a method by full name; undefined when gen/ts lacks it. */
export function specOf(method) {
    return byMethod.get(method);
}
