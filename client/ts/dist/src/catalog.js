// SPDX-License-Identifier: MIT
// What the client knows of each method of proto/ without asking tkd: its
// request and reply types, its kind and its timeouts, as the method's option
// (tk.v1.method) declares them (tools/regen generates the table into
// gen/ts/tk/catalog.ts). The twins: tk_catalog_find_method (C) and
// tk.catalog (Python). tkd's own word is tk.v1.Control/ListMethods.
import { METHODS } from "../gen/tk/catalog.js";
export { METHODS };
const byName = new Map(METHODS.map((m) => [m.name, m]));
/** The method named "tk.v1.Git/Status", or undefined. */
export function findMethod(name) {
    return byName.get(name);
}
