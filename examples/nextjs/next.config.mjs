/** @type {import("next").NextConfig} */
const nextConfig = {
  // libSQL's native client stays a Node module, not bundled.
  serverExternalPackages: ["@libsql/client", "libsql"],
};
export default nextConfig;
