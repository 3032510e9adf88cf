#pragma once
// The families whose built names the catalog checks (base/catalog.cpp: a pipes op's two
// parameters), spelled here beside the entries that name their family: the
// catalog lies below the analysis headers that declare the families (kFamily).
namespace gpuprobe::catalog_family {

constexpr char kPipes[] = "pipes";

}  // namespace gpuprobe::catalog_family
