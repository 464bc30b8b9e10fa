/** The part of solc-js the contract build uses (the package ships no types). */
declare module "solc" {
  const solc: {
    compile(input: string): string;
    version(): string;
  };
  export default solc;
}
