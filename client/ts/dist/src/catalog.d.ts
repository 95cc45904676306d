import { METHODS, type MethodEntry } from "../gen/tk/catalog.js";
export { METHODS, type MethodEntry };
/** The method named "tk.v1.Git/Status", or undefined. */
export declare function findMethod(name: string): MethodEntry | undefined;
