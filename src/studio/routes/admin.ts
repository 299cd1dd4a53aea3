export function registerAdminConsole(_app: unknown, _ctx: unknown) {}
