# Copy the contract with its package renamed (sworn.v1 -> svpb.v1), so the verifier's generated
# code has symbols of its own and links beside the recording side's in one test binary.
file(READ ${IN} text)
string(REPLACE "package sworn.v1;" "package svpb.v1;" text "${text}")
file(WRITE ${OUT} "${text}")
