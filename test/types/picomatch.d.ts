// picomatch ships no types and @types/picomatch is not a dependency: the one call the tests make
// (test/search/library-pattern.test.ts compares policies with 0.7.10's matcher), typed as picomatch 4 documents it.
declare module "picomatch" {
  export default function picomatch(glob: string | string[], options?: { dot?: boolean }): (input: string) => boolean;
}
