#pragma once
// The family of the entries a macro builds (base/catalog.cpp: a pipes op's two parameters),
// spelled here beside the entries that name their family: the catalog lies below the analysis
// headers that declare the families (kFamily). A built name of another family is checked
// against one of that family's fixed entries instead (checked_beside).
namespace gpuprobe::catalog_family {

constexpr char kPipes[] = "pipes";

}  // namespace gpuprobe::catalog_family
