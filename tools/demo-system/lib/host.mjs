// What the simulation uses of the process that runs it (demo-system.mjs sets it once, before the
// Simulation is made): { opts, extended, server, stats, extensionState, nextTaskId, AgentConnection }.

export const host = {};
export function bindHost(values) { Object.assign(host, values); }
